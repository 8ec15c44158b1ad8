// A kill -9 after a run recorded its end but before it released its lock must not block the next `continue`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquireRunLock, readLockOwner } from "../../src/store/run-lock.js";
import { runPaths } from "../../src/store/run-dir.js";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, removeDir, runDir, spawnDelta, tempDir, waitFor, writeAgent } from "./harness.js";

let root: string;
beforeAll(() => {
  root = tempDir();
});
afterAll(() => removeDir(root));

// The first on_run_end hook records its pid and waits, so the engine can be killed after ENGINE_END, lock still held.
const HOOKS = `on_run_end:
  command: ["sh", "-c", "if [ ! -e hook.pid ]; then echo $$ > hook.pid; exec sleep 30; fi"]
  timeout_ms: 60000
`;

describe("a stale lock left by a killed engine", () => {
  it("is removed by continue when the recorded engine process is gone", async () => {
    const server = await startMockLlm([reply.text("first answer"), reply.text("second answer")]);
    const agent = writeAgent(root, { hooksYaml: HOOKS });
    const ws = join(root, "ws");
    try {
      const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "s1", "-m", "go"], { env: modelEnv(server.baseUrl) });
      await waitFor(() => existsSync(join(ws, "hook.pid")) && readFileSync(join(ws, "hook.pid"), "utf8").endsWith("\n"));
      child.kill("SIGKILL");
      await child;
      process.kill(Number(readFileSync(join(ws, "hook.pid"), "utf8")), "SIGKILL");
      expect(readEvents(ws, "s1").at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
      expect(existsSync(join(runDir(ws, "s1"), ".lock"))).toBe(true);

      const next = await delta(["continue", "--run-id", "s1", "-w", ws, "-m", "once more", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(next.stderr).toContain("[Janitor] Removed the stale lock");
      expect(next.exitCode).toBe(0);
      expect(JSON.parse(next.stdout)).toMatchObject({ status: "COMPLETED", result: "second answer" });
      expect(existsSync(join(runDir(ws, "s1"), ".lock"))).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("is left alone when a live process holds it, even while metadata.json still names the dead engine", async () => {
    const server = await startMockLlm([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-live");
    const ws = join(root, "ws-live");
    try {
      expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "l1", "-m", "go"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(0);
      // This test process takes the lock the way a second `continue` does, before it rewrites metadata.json.
      const paths = runPaths(ws, "l1");
      const release = await acquireRunLock(paths);
      try {
        expect(readLockOwner(paths)).toEqual({ pid: process.pid, hostname: expect.any(String), locked_at_unix: expect.any(Number) });
        const refused = await delta(["continue", "--run-id", "l1", "-w", ws, "-m", "again"], { env: modelEnv(server.baseUrl) });
        expect(refused.exitCode).toBe(126);
        expect(refused.stderr).toContain("is being written by another process");
        expect(existsSync(paths.lock)).toBe(true);
      } finally {
        await release();
      }
      expect(readLockOwner(paths)).toBeNull();
    } finally {
      await server.close();
    }
  });
});
