// End to end: prune against a continue that is taking the same run: no folder is re-created, and a folder an older engine left (owner records only) gets a clear, recoverable error.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { pauseGate } from "../support/pause-points.js";
import { CRASH_TRACE, delta, modelEnv, runDir, setUpE2e, spawnDelta, writeAgent } from "./harness.js";

const { root, serve } = setUpE2e("delta-prune-continue-");
let server: MockLlm;
let agent: string;
beforeAll(async () => {
  server = await serve(() => reply.text("done"));
  agent = writeAgent(root);
});

describe("a continue that judged the run, then prune removed it before the continue claimed it", () => {
  it("is refused, saying the run was removed, and re-creates no folder: the id is free for a new run", async () => {
    const ws = join(root, "ws-race");
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "raced", "-m", "go"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(0);
    // The continue stops after judging the run's last holder (released) and before claiming the next generation.
    const gate = pauseGate("lock-judged", root);
    const resumed = spawnDelta(["continue", "--run-id", "raced", "-w", ws, "-m", "again", "--format", "json"], { env: { ...modelEnv(server.baseUrl), ...gate.env } });
    try {
      await gate.reached();
      const pruned = await delta(["prune", "-w", ws, "--keep", "0", "--yes", "--format", "json"]);
      expect(pruned.exitCode, pruned.stderr).toBe(0);
      expect(JSON.parse(pruned.stdout)).toMatchObject({ removed: ["raced"] });
      expect(existsSync(runDir(ws, "raced"))).toBe(false);
    } finally {
      gate.open();
    }
    const refused = await resumed;
    expect(refused.exitCode, String(refused.stderr)).toBe(126);
    expect(String(refused.stderr)).not.toMatch(CRASH_TRACE);
    expect(JSON.parse(String(refused.stdout))).toMatchObject({ status: "REFUSED", error: { type: "RUN_REFUSED", message: expect.stringContaining("Run raced was removed (by `delta prune`, or by hand) while this process was taking it") } });
    expect(existsSync(runDir(ws, "raced"))).toBe(false);
    expect(readdirSync(join(ws, ".delta"), { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))).toEqual([]);
    const again = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "raced", "-m", "anew"], { env: modelEnv(server.baseUrl) });
    expect(again.exitCode, again.stderr).toBe(0);
  }, 60_000);
});

describe("a run folder holding only owner records (.lock/), as an older engine's prune race left it", () => {
  it("gets a clear error from continue, run and show, a warning from list-runs, and prune removes it so the id is free", async () => {
    const ws = join(root, "ws-leftover");
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "half", "-m", "go"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(0);
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "whole", "-m", "go"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(0);
    const dir = runDir(ws, "half");
    for (const name of readdirSync(dir)) if (name !== ".lock") rmSync(join(dir, name), { recursive: true, force: true });
    const explained = `${dir} holds no journal, only owner records (.lock/)`;

    const continued = await delta(["continue", "--run-id", "half", "-w", ws, "-m", "more", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(continued.exitCode).toBe(126);
    expect(continued.stderr).not.toMatch(CRASH_TRACE);
    expect(continued.stderr).not.toContain("ENOENT");
    expect(continued.stderr).toContain(explained);
    expect(continued.stderr).toContain(`delta prune -w ${ws} --keep 0 --yes`);
    const started = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "half", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(started.exitCode).toBe(126);
    expect(started.stderr).toContain(explained);
    const shown = await delta(["show", "half", "-w", ws]);
    expect(shown.exitCode).toBe(126);
    expect(shown.stderr).toContain(explained);

    const listed = await delta(["list-runs", "-w", ws, "--format", "json"]);
    expect(listed.exitCode).toBe(0);
    expect((JSON.parse(listed.stdout) as { run_id: string }[]).map((run) => run.run_id)).toEqual(["whole"]);
    expect(listed.stderr).toContain(explained);

    const dry = await delta(["prune", "-w", ws, "--older-than", "7d"]);
    expect(dry.stdout).toContain(`would remove leftover half  (owner records only, no journal)  ${ws}`);
    expect(dry.stderr).toContain("Nothing removed: add --yes to remove 1 leftover folder.");
    expect(existsSync(dir)).toBe(true);
    const pruned = await delta(["prune", "-w", ws, "--older-than", "7d", "--yes", "--format", "json"]);
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ removed: [], leftovers: [{ run_id: "half", removed: true }] });
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(runDir(ws, "whole"))).toBe(true);
    const fresh = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "half", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(fresh.exitCode, fresh.stderr).toBe(0);
  }, 60_000);
});
