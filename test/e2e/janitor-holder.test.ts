// End to end: the janitor judges the run's owner record: a reused pid is not the live engine, --force never takes a run whose heartbeat moves, a dead holder elsewhere is taken over.
import { spawn } from "node:child_process";
import { readJournal } from "../support/journal-read.js";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { type MockLlm, reply, taskOf, toolResultsOf } from "../support/mock-llm.js";
import { delta, eventTypes, journalHas, modelEnv, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const SLOW_TOOLS = 'tools:\n  - name: slow\n    shell: "sleep ${seconds}"\n';
/** The engines here beat every 300 ms, so a taker watches a holder for 1.5 s. */
const BEAT_MS = 300;

const { root, serve } = setUpE2e();
let server: MockLlm;
let agent: string;

beforeAll(async () => {
  agent = writeAgent(root, { tools: SLOW_TOOLS });
  // Every run here: one slow tool call (as long as the task says), then "done".
  server = await serve((request) => {
    const seconds = /sleep (\d+)/.exec(taskOf(request))?.[1] ?? "3";
    return toolResultsOf(request).length > 0 ? reply.text("done") : reply.toolCalls([{ name: "slow", arguments: { seconds } }]);
  });
});

/**
 * Starts a run and returns once its slow tool is running: the engine is alive and holds the run's lock.
 * A test that acts on the live engine gives it a longer tool, so a busy machine cannot end the run first.
 */
async function startSlowRun(ws: string, runId: string, seconds = 3) {
  const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", runId, "-m", `sleep ${seconds}`, "--format", "json"], { env: modelEnv(server.baseUrl, { DELTA_HEARTBEAT_MS: String(BEAT_MS) }) });
  await waitFor(() => journalHas(ws, runId, "ACTION_REQUEST"), 15_000, `${runId} reaching its tool`);
  return { child }; // wrapped: the child is a promise, and returning it bare would await its exit
}

/** The current owner record of the run: the highest generation in its .lock/ directory. */
function ownerRecordFile(ws: string, runId: string): string {
  const lock = join(runDir(ws, runId), ".lock");
  const newest = readdirSync(lock).filter((name) => /^\d+\.json$/.test(name)).sort((a, b) => parseInt(b) - parseInt(a))[0]!;
  return join(lock, newest);
}

function rewriteOwnerRecord(ws: string, runId: string, changes: Record<string, unknown>): void {
  const file = ownerRecordFile(ws, runId);
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), ...changes }));
}

describe.concurrent("the janitor's judgement of the recorded process", () => {
  it("treats a pid now held by a newer node process as reused: the run is recovered", async () => {
    const ws = join(root, "ws-reused");
    const { child } = await startSlowRun(ws, "reused");
    child.kill("SIGKILL");
    await child;
    // A node process that is not the engine now holds a pid; pretend the dead engine had that pid.
    const impostor = spawn(process.execPath, ["-e", "setTimeout(() => {}, 20000)"], { stdio: "ignore" });
    try {
      const started = JSON.parse(readFileSync(ownerRecordFile(ws, "reused"), "utf8")).acquired_at_unix as number;
      rewriteOwnerRecord(ws, "reused", { pid: impostor.pid, acquired_at_unix: started - 60_000 });
      const resumed = await delta(["continue", "--run-id", "reused", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(resumed.stderr).toMatch(/\[Janitor\].*another process than the one that held the run.*pid reused/);
      expect(resumed.exitCode).toBe(0);
      const events = readJournal(join(runDir(ws, "reused"), "journal.jsonl"));
      expect(events.find((e) => e.type === "ERROR")).toMatchObject({ error_type: "ORPHANED_RUN" });
    } finally {
      impostor.kill("SIGKILL");
    }
  });

  it("still refuses while the recorded node process is the engine itself (started before the run)", async () => {
    const ws = join(root, "ws-alive");
    const { child } = await startSlowRun(ws, "alive", 6);
    try {
      const refused = await delta(["continue", "--run-id", "alive", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(refused.exitCode).toBe(126);
      expect(JSON.parse(refused.stdout).error.message).toMatch(/still active/);
    } finally {
      child.kill("SIGKILL");
      await child;
    }
  });

  it("--force does not take the run from a live engine: it watches the heartbeat move and refuses, writing nothing", async () => {
    const ws = join(root, "ws-force-live");
    const { child } = await startSlowRun(ws, "force-live", 8);
    const journal = join(runDir(ws, "force-live"), "journal.jsonl");
    try {
      const before = readFileSync(journal, "utf8");
      const forced = await delta(["continue", "--run-id", "force-live", "-w", ws, "--force", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(forced.exitCode).toBe(126);
      expect(forced.stderr).toMatch(/\[Janitor\] Run force-live is held by process \d+ on host .*: watching its heartbeat for 1\.5 s/);
      expect(JSON.parse(forced.stdout).error.message).toMatch(/being written by process \d+ .* which is alive \(its heartbeat went from \d+ to \d+ in 1\.5 s\)/);
      // Nothing was written: the live engine is still the run's only writer.
      expect(readFileSync(journal, "utf8")).toBe(before);
      expect(eventTypes(readJournal(journal))).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST"]);
    } finally {
      child.kill("SIGKILL");
      await child;
    }
  });

  it("recovers a run whose engine died on another host with a plain continue, once its heartbeat stood still, naming the old owner", async () => {
    const ws = join(root, "ws-other-dead");
    const { child } = await startSlowRun(ws, "other-dead");
    child.kill("SIGKILL");
    await child;
    // The record now names another machine (as a run started on a node that died would): its pid means nothing here.
    rewriteOwnerRecord(ws, "other-dead", { machine_id: "0123456789abcdef0123456789abcdef", boot_id: "00000000-1111-2222-3333-444444444444" });
    const resumed = await delta(["continue", "--run-id", "other-dead", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(resumed.stderr).toMatch(/watching its heartbeat for 1\.5 s/);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "done" });
    const orphaned = readJournal(join(runDir(ws, "other-dead"), "journal.jsonl")).find((e) => e.type === "ERROR");
    expect(orphaned).toMatchObject({
      error_type: "ORPHANED_RUN",
      error_message: expect.stringMatching(/pid \d+ on host '.*' \(machine 01234567, boot 00000000\).*made no heartbeat in 1\.5 s/),
      error_details: { previous_owner: { machine_id: "0123456789abcdef0123456789abcdef", boot_id: "00000000-1111-2222-3333-444444444444" }, taken_as_generation: 2 },
    });
  });
});
