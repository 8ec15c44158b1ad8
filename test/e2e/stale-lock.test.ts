// A kill -9 after a run recorded its end but before it released its lock must not block the next `continue`; a live holder always does.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readCurrentOwner, takeRun } from "../../src/store/lease/take-run.js";
import { runPaths } from "../../src/store/run-dir.js";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";
import { parseRunId } from "../../src/store/run-id.js";

const { root } = setUpE2e();

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
      const paths = runPaths(ws, parseRunId("s1"));
      expect(readCurrentOwner(paths)?.record).toMatchObject({ generation: 1, released_at_unix: null });

      const next = await delta(["continue", "--run-id", "s1", "-w", ws, "-m", "once more", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(next.stderr).toMatch(/\[Janitor\] Took over the lock of run s1 from its last holder: process \d+ no longer exists/);
      expect(next.exitCode).toBe(0);
      expect(JSON.parse(next.stdout)).toMatchObject({ status: "COMPLETED", result: "second answer" });
      expect(readCurrentOwner(paths)?.record).toMatchObject({ generation: 2, released_at_unix: expect.any(Number) });
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
      // This test process takes the run the way a second `continue` does, before it rewrites metadata.json.
      const paths = runPaths(ws, parseRunId("l1"));
      const hold = await takeRun(paths, { runId: "l1", workDir: ws, force: false });
      try {
        expect(readCurrentOwner(paths)?.record).toMatchObject({ generation: 2, pid: process.pid, released_at_unix: null, took_over: null });
        const refused = await delta(["continue", "--run-id", "l1", "-w", ws, "-m", "again"], { env: modelEnv(server.baseUrl) });
        expect(refused.exitCode).toBe(126);
        expect(refused.stderr).toContain(`still active (PID ${process.pid})`);
        expect(readCurrentOwner(paths)?.record).toMatchObject({ generation: 2, pid: process.pid, released_at_unix: null });
      } finally {
        hold.release();
      }
      expect(readCurrentOwner(paths)?.record).toMatchObject({ generation: 2, released_at_unix: expect.any(Number) });
    } finally {
      await server.close();
    }
  });
});
