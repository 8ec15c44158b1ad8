// Races between processes on one run, forced with pause points and SIGSTOP (never with sleeps): one writer, always.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";

import { messagesOf, reply, taskOf, type MockLlm } from "../support/mock-llm.js";
import { pauseGate } from "../support/pause-points.js";
import { delta, modelEnv, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const TOOLS = `tools:
  - name: mark
    shell: "mkdir -p markers && echo ran >> markers/\${tag} && echo marked \${tag}"
  - name: hold
    shell: "mkdir -p markers && echo ran >> markers/\${tag} && while [ ! -e release-\${tag} ]; do sleep 0.05; done && echo marked \${tag}"
`;
const ROUNDS = 3;

const { root, serve } = setUpE2e("delta-races-");
let server: MockLlm;
let agent: string;

beforeAll(async () => {
  agent = writeAgent(root, { tools: TOOLS });
  // A task "mark <tag>", "hold <tag>" or "ask <prompt>" gets that tool call first; a tool result "done"; a later message "again".
  server = await serve((request) => {
    const messages = messagesOf(request);
    const last = messages.at(-1);
    if (last?.role === "tool") return reply.text(`done after ${last.content}`);
    if (messages.filter((message) => message.role === "user").length > 1) return reply.text("again");
    const [verb, arg] = taskOf(request).split(" ");
    if (verb === "ask") return reply.toolCalls([{ name: "ask_human", arguments: { prompt: arg ?? "?" } }]);
    return reply.toolCalls([{ name: verb === "hold" ? "hold" : "mark", arguments: { tag: arg ?? "x" } }]);
  });
});

const env = (extra: Record<string, string> = {}): Record<string, string> => modelEnv(server.baseUrl, extra);
const journalPath = (ws: string, runId: string): string => join(runDir(ws, runId), "journal.jsonl");
const modelCalls = (task: string): number => server.requests.filter((request) => taskOf(request) === task).length;
const ofType = <T extends JournalEvent["type"]>(events: JournalEvent[], type: T): EventOf<T>[] => events.filter((event): event is EventOf<T> => event.type === type);

function markerRuns(ws: string, tag: string): number {
  const file = join(ws, "markers", tag);
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

/** A run whose engine was killed after its tool ran and before the result was journaled: RUNNING, holder dead. */
async function crashedRun(ws: string, runId: string, task: string): Promise<void> {
  const gate = pauseGate("journal-append:ACTION_RESULT", root);
  const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", runId, "-m", task], { env: env(gate.env) });
  await gate.reached();
  child.kill("SIGKILL");
  await child;
}

/** Every owner record of the run, by name, with its bytes (a beat stopped mid-write may leave a hidden .tmp beside them: not a record). */
function lockFiles(ws: string, runId: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(runDir(ws, runId)).filter((entry) => entry.startsWith(".lock"))) {
    const path = join(runDir(ws, runId), name);
    if (statSync(path).isDirectory()) for (const inner of readdirSync(path).filter((file) => !file.endsWith(".tmp"))) files[`${name}/${inner}`] = readFileSync(join(path, inner), "utf8");
    else files[name] = readFileSync(path, "utf8");
  }
  return files;
}

/** The invariants of a run after a race: a valid journal, one result per call, each tool run once. */
function expectOneWriter(ws: string, runId: string, tag: string): JournalEvent[] {
  const events = readJournal(journalPath(ws, runId));
  const results = ofType(events, "ACTION_RESULT");
  expect(new Set(results.map((result) => result.action_id)).size).toBe(results.length);
  expect(ofType(events, "ACTION_REQUEST").map((request) => request.action_id)).toEqual(results.map((result) => result.action_id));
  expect(markerRuns(ws, tag)).toBe(1);
  expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
  return events;
}

describe("simultaneous continues on a crashed run", () => {
  for (let round = 1; round <= ROUNDS; round += 1) {
    it(`lets exactly one proceed when the others judged the dead holder before it took the run (round ${round})`, async () => {
      const ws = join(root, `judged-${round}`);
      const runId = `judged-${round}`;
      const task = `mark ${runId}`;
      await crashedRun(ws, runId, task);

      const judged = pauseGate("lock-judged", root);
      const losers = [1, 2, 3].map(() => spawnDelta(["continue", "--run-id", runId, "-w", ws, "--format", "json"], { env: env(judged.env) }));
      await judged.reached(3);
      const held = pauseGate("lock-held", root);
      const winner = spawnDelta(["continue", "--run-id", runId, "-w", ws, "--format", "json"], { env: env(held.env) });
      await held.reached();
      judged.open();
      const lost = await Promise.all(losers);
      held.open();
      const won = await winner;

      expect(lost.map((result) => result.exitCode)).toEqual([126, 126, 126]);
      for (const result of lost) expect(JSON.parse(String(result.stdout)).error.message).toMatch(/delta list-runs|wait/);
      expect(won.exitCode).toBe(0);
      const events = expectOneWriter(ws, runId, runId);
      expect(ofType(events, "ERROR").filter((error) => error.error_type === "ORPHANED_RUN")).toHaveLength(1);
      expect(modelCalls(task)).toBe(2);
    });

    it(`lets exactly one of four continues released at the same instant proceed (round ${round})`, async () => {
      const ws = join(root, `herd-${round}`);
      const runId = `herd-${round}`;
      const task = `mark ${runId}`;
      await crashedRun(ws, runId, task);

      const judged = pauseGate("lock-judged", root);
      const all = [1, 2, 3, 4].map(() => spawnDelta(["continue", "--run-id", runId, "-w", ws, "--format", "json"], { env: env(judged.env) }));
      await judged.reached(4);
      judged.open();
      const results = await Promise.all(all);

      expect(results.map((result) => result.exitCode).sort()).toEqual([0, 126, 126, 126]);
      expectOneWriter(ws, runId, runId);
      expect(modelCalls(task)).toBe(2);
    });
  }
});

describe("a continue that stalled before taking the run", () => {
  it("is refused once another continue has completed the run, and never calls the model", async () => {
    const ws = join(root, "late");
    const task = "mark late";
    await crashedRun(ws, "late", task);
    const gate = pauseGate("continue-before-lock", root);
    const late = spawnDelta(["continue", "--run-id", "late", "-w", ws, "--format", "json"], { env: env(gate.env) });
    await gate.reached();
    const first = await delta(["continue", "--run-id", "late", "-w", ws], { env: env() });
    expect(first.exitCode).toBe(0);
    const completed = readFileSync(journalPath(ws, "late"), "utf8");

    gate.open();
    const refused = await late;
    expect(refused.exitCode).toBe(126);
    expect(JSON.parse(String(refused.stdout)).error.message).toMatch(/COMPLETED.*-m/s);
    expect(readFileSync(journalPath(ws, "late"), "utf8")).toBe(completed);
    expect(modelCalls(task)).toBe(2);
  });

  it("records one answer to a question two continues answered", async () => {
    const ws = join(root, "answers");
    const task = "ask Which?";
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "answers", "-m", task], { env: env() })).exitCode).toBe(101);
    const gate = pauseGate("continue-before-lock", root);
    const second = spawnDelta(["continue", "--run-id", "answers", "-w", ws, "-m", "second answer"], { env: env(gate.env) });
    await gate.reached();
    expect((await delta(["continue", "--run-id", "answers", "-w", ws, "-m", "first answer"], { env: env() })).exitCode).toBe(0);
    gate.open();
    expect((await second).exitCode).toBe(0);

    const events = readJournal(journalPath(ws, "answers"));
    expect(ofType(events, "HUMAN_INPUT_RECEIVED").map((event) => event.response)).toEqual(["first answer"]);
    const askId = ofType(events, "HUMAN_INPUT_REQUEST")[0]!.action_id;
    expect(ofType(events, "ACTION_RESULT").filter((result) => result.action_id === askId).map((result) => result.observation_content)).toEqual(["first answer"]);
    // The run had gone on: the late text is a new message to the model, not a second answer.
    expect(ofType(events, "USER_MESSAGE").map((event) => event.content)).toEqual([task, "second answer"]);
  });
});

describe("a holder taken over with --force", () => {
  async function forceTakeover(ws: string, runId: string): Promise<{ journal: string; metadata: string; lock: Record<string, string> }> {
    // The stopped holder is alive: only --force takes the run from it, and only once its heartbeat has stood still for five beats.
    const forced = await delta(["continue", "--run-id", runId, "-w", ws, "--force", "--format", "json"], { env: env() });
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(forced.stderr).toMatch(/watching its heartbeat for 1\.5 s/);
    return {
      journal: readFileSync(journalPath(ws, runId), "utf8"),
      metadata: readFileSync(join(runDir(ws, runId), "metadata.json"), "utf8"),
      lock: lockFiles(ws, runId),
    };
  }

  async function expectWroteNothing(old: ReturnType<typeof spawnDelta>, ws: string, runId: string, after: Awaited<ReturnType<typeof forceTakeover>>): Promise<void> {
    const result = await old;
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toMatch(/no longer owns run/);
    expect(readFileSync(journalPath(ws, runId), "utf8")).toBe(after.journal);
    expect(readFileSync(join(runDir(ws, runId), "metadata.json"), "utf8")).toBe(after.metadata);
    expect(lockFiles(ws, runId)).toEqual(after.lock);
    expectOneWriter(ws, runId, runId);
  }

  it("writes nothing after it resumes from SIGSTOP, and exits 1", async () => {
    const ws = join(root, "stopped");
    const old = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "stopped", "-m", "hold stopped"], { env: env({ DELTA_HEARTBEAT_MS: "300" }) });
    // The tool running, and its process group noted in the owner record (a write the engine makes as the tool starts).
    await waitFor(() => markerRuns(ws, "stopped") === 1 && Object.values(lockFiles(ws, "stopped")).some((text) => text.includes('"tool_group":{')), 15_000, "the tool running");
    // Stopped by a signal (Ctrl-Z, a migrating VM) while its tool runs, for longer than the stale period; the tool finishes meanwhile.
    old.kill("SIGSTOP");
    writeFileSync(join(ws, "release-stopped"), "");
    const after = await forceTakeover(ws, "stopped");
    old.kill("SIGCONT");
    await expectWroteNothing(old, ws, "stopped", after);
  });

  it("writes nothing when it was stopped between its ownership check and its write", async () => {
    const ws = join(root, "mid-append");
    const gate = pauseGate("journal-append:ACTION_RESULT", root);
    const old = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "mid-append", "-m", "mark mid-append"], { env: env({ ...gate.env, DELTA_HEARTBEAT_MS: "300" }) });
    await gate.reached();
    const after = await forceTakeover(ws, "mid-append");
    gate.open();
    await expectWroteNothing(old, ws, "mid-append", after);
  });
});
