// `delta prune`: finished runs (or their io/) go, by age or beyond a count; live, held, waiting and FAILED runs stay unless named, and nothing goes without --yes.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { pauseGate } from "../support/pause-points.js";
import { delta, modelEnv, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const TOOLS = 'tools:\n  - name: slow\n    shell: "echo started >> progress.txt; sleep ${seconds}"\n  - name: echo\n    exec: "echo ${text}"\n';

const { root, serve } = setUpE2e("delta-prune-");
let server: MockLlm;
let agent: string;
beforeAll(async () => {
  // Every task names what the model does: finish at once, call a tool first, ask a human, or run a slow tool.
  server = await serve((request) => {
    const task = JSON.stringify(request.body);
    const answered = task.includes('"role":"tool"');
    if (task.includes("ask me") && !answered) return reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which?" } }]);
    if (task.includes("go slow") && !answered) return reply.toolCalls([{ name: "slow", arguments: { seconds: "60" } }]);
    if (task.includes("fail me") && !answered) return reply.toolCalls([{ name: "echo", arguments: { text: "x" } }]);
    return reply.text("done");
  });
  agent = writeAgent(root, { tools: TOOLS });
});

async function run(ws: string, id: string, task: string, extra: string[] = []): Promise<number> {
  const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", id, "-m", task, ...extra], { env: modelEnv(server.baseUrl) });
  return result.exitCode;
}

/** Makes a run look last updated `days` ago, as metadata.json tells list-runs. */
function age(ws: string, id: string, days: number): void {
  const file = join(runDir(ws, id), "metadata.json");
  const metadata = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  writeFileSync(file, JSON.stringify({ ...metadata, updated_at: new Date(Date.now() - days * 86_400_000).toISOString() }));
}

describe("delta prune", () => {
  it("lists without --yes and removes nothing; with --yes removes only COMPLETED runs past the age or the count, never a live, waiting or FAILED one", async () => {
    const ws = join(root, "ws-mixed");
    expect(await run(ws, "old-done", "finish")).toBe(0);
    expect(await run(ws, "new-done", "finish")).toBe(0);
    expect(await run(ws, "failed", "fail me", ["--max-iterations", "1"])).toBe(1);
    expect(await run(ws, "waiting", "ask me")).toBe(101);
    for (const id of ["old-done", "failed", "waiting"]) age(ws, id, 10);
    const live = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "live", "-m", "go slow"], { env: modelEnv(server.baseUrl) });
    try {
      await waitFor(() => existsSync(join(ws, "progress.txt")));
      const listed = await delta(["prune", "-w", ws, "--older-than", "7d"]);
      expect(listed.exitCode, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/^would remove run old-done {2}COMPLETED/);
      expect(listed.stdout.trim().split("\n")).toHaveLength(1);
      expect(listed.stderr).toContain("Nothing removed: add --yes to remove this run");
      expect(existsSync(runDir(ws, "old-done"))).toBe(true);

      const byAge = await delta(["prune", "-w", ws, "--older-than", "7d", "--yes"]);
      expect(byAge.exitCode, byAge.stderr).toBe(0);
      expect(existsSync(runDir(ws, "old-done"))).toBe(false);
      for (const id of ["new-done", "failed", "waiting", "live"]) expect(existsSync(runDir(ws, id)), id).toBe(true);

      const byCount = await delta(["prune", "-w", ws, "--keep", "0", "--yes", "--format", "json"]);
      expect(JSON.parse(byCount.stdout)).toMatchObject({ dry_run: false, removed: ["new-done"] });
      for (const id of ["failed", "waiting", "live"]) expect(existsSync(runDir(ws, id)), id).toBe(true);

      const waiting = await delta(["prune", "-w", ws, "--keep", "0", "--status", "WAITING_FOR_INPUT", "--yes"]);
      expect(waiting.exitCode).toBe(126);
      expect(waiting.stderr).toContain("a RUNNING, WAITING_FOR_INPUT or DEFERRED run (one that waits to go on) is never removed");
      expect((await delta(["prune", "-w", ws, "--keep", "0", "--status", "RUNNING", "--yes"])).exitCode).toBe(126);
      expect((await delta(["prune", "-w", ws, "--yes"])).exitCode).toBe(126);

      const failed = await delta(["prune", "-w", ws, "--keep", "0", "--status", "FAILED", "--yes"]);
      expect(failed.exitCode, failed.stderr).toBe(0);
      expect(existsSync(runDir(ws, "failed"))).toBe(false);
      for (const id of ["waiting", "live"]) expect(existsSync(runDir(ws, id)), id).toBe(true);
    } finally {
      live.kill("SIGKILL");
      await live;
    }
  }, 120_000);

  it("--io-only removes io/ and keeps the journal: the run still shows and continues", async () => {
    const ws = join(root, "ws-io");
    expect(await run(ws, "kept", "finish")).toBe(0);
    const pruned = await delta(["prune", "-w", ws, "--keep", "0", "--io-only", "--yes"]);
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^removed io\/ of kept/);
    expect(existsSync(join(runDir(ws, "kept"), "io"))).toBe(false);
    expect((await delta(["show", "kept", "-w", ws])).exitCode).toBe(0);
    const continued = await delta(["continue", "--run-id", "kept", "-w", ws, "-m", "once more", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(existsSync(join(runDir(ws, "kept"), "io", "invocations"))).toBe(true);
  }, 60_000);

  it("a run taken by `continue` after prune judged it, before prune took it, is left alone", async () => {
    const ws = join(root, "ws-race");
    expect(await run(ws, "raced", "finish")).toBe(0);
    const pruneGate = pauseGate("prune-judged", root);
    const continueGate = pauseGate("lock-held", root);
    const prune = spawnDelta(["prune", "-w", ws, "--keep", "0", "--yes", "--format", "json"], { env: pruneGate.env });
    const resumed = spawnDelta(["continue", "--run-id", "raced", "-w", ws, "-m", "again"], { env: { ...modelEnv(server.baseUrl), ...continueGate.env } });
    try {
      await pruneGate.reached();
      await continueGate.reached();
      pruneGate.open();
      const pruned = await prune;
      expect(pruned.exitCode, String(pruned.stderr)).toBe(0);
      expect(JSON.parse(String(pruned.stdout))).toMatchObject({ removed: [], left: [{ run_id: "raced", reason: expect.stringMatching(/still active \(PID \d+\)/) }] });
      expect(existsSync(runDir(ws, "raced"))).toBe(true);
    } finally {
      pruneGate.open();
      continueGate.open();
    }
    expect((await resumed).exitCode).toBe(0);
    expect(readFileSync(join(runDir(ws, "raced"), "journal.jsonl"), "utf8").match(/"type":"ENGINE_END"/g)).toHaveLength(2);
  }, 60_000);
});
