// `delta fork RUN --at N`: a new run holding RUN's iterations 1..N renumbered, with their io records copied and repointed, naming its source; the source byte for byte as it was; the fork goes on with `continue -m`.
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { rebuildRequests } from "../../src/store/recorded-requests.js";
import { runPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";
import { readInvocationRecords } from "../support/invocation-records.js";
import { fault, messagesOf, reply } from "../support/mock-llm.js";
import { collectFiles, delta, eventTypes, modelEnv, readEvents, runDir, setUpE2e, writeAgent } from "./harness.js";

const { root, serve } = setUpE2e("delta-fork-");
let agent: string;
let ws: string;

// Each observation is longer than a pointed-at text (256 characters): the request parts point into the journal for it.
const TOOLS = `tools:
  - name: note
    description: Read a note
    shell: 'printf "%0300d\\n" 0; echo "note \${name} in run $DELTA_RUN_ID"'
`;

/** Every file of a run folder with its bytes. */
function snapshot(dir: string): Map<string, string> {
  return new Map(collectFiles(dir).map((file) => [relative(dir, file), readFileSync(file, "latin1")]));
}

/** An event as the fork copies it: without what its journal gives it (seq, time, hash). */
function copiedPart(event: JournalEvent): Record<string, unknown> {
  const { seq: _seq, timestamp: _timestamp, hash: _hash, ...rest } = event as JournalEvent & { hash?: string };
  return rest;
}

/** The journal seqs a run's request parts take their text from, in order. */
function journalPointers(paths: { invocationsDir: string }): number[] {
  const parts = readFileSync(join(paths.invocationsDir, "request-parts.jsonl"), "utf8");
  return [...parts.matchAll(/"content_from":\{"seq":(\d+)/g)].map((match) => Number(match[1]));
}

const requestsOf = (workDir: string, runId: string) => {
  const paths = runPaths(workDir, parseRunId(runId));
  return rebuildRequests(paths, readInvocationRecords(paths)).map(({ request }) => request);
};

beforeAll(async () => {
  agent = writeAgent(root, { tools: TOOLS });
  ws = join(root, "ws");
  // The source: iteration 1, a model failure and a continue (a process's end, error and start the fork leaves out), iterations 2 and 3.
  const first = await serve([reply.toolCalls([{ id: "call_1", name: "note", arguments: { name: "one" } }]), fault.status(400, { message: "bad request" })]);
  expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "source", "Read the notes"], { env: modelEnv(first.baseUrl) })).exitCode).toBe(1);
  const second = await serve([reply.toolCalls([{ id: "call_2", name: "note", arguments: { name: "two" } }]), reply.text("Read two notes")]);
  const resumed = await delta(["continue", "--run-id", "source", "-w", ws], { env: modelEnv(second.baseUrl) });
  expect(resumed.exitCode, resumed.stderr).toBe(0);
});

describe("delta fork", () => {
  it("copies iterations 1..N renumbered, names its source, repoints the io records, and leaves the source byte for byte as it was", async () => {
    const source = runDir(ws, "source");
    const before = snapshot(source);
    const result = await delta(["fork", "source", "--at", "2", "-w", ws, "--run-id", "fork-2", "--json"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(snapshot(source)).toEqual(before);

    const sourceEvents = readEvents(ws, "source");
    const events = readEvents(ws, "fork-2");
    expect(eventTypes(sourceEvents)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "LLM_ATTEMPT_FAILED", "ERROR", "ENGINE_END", "ENGINE_START", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "THOUGHT", "ENGINE_END"]);
    expect(eventTypes(events)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "LLM_ATTEMPT_FAILED", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "ENGINE_END"]);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // The source's seq 12 (iteration 2's result) is the fork's 9.
    const kept = [2, 3, 4, 5, 6, 10, 11, 12].map((seq) => copiedPart(sourceEvents[seq - 1]!));
    expect(events.slice(1, 9).map(copiedPart)).toEqual(kept);
    const start = events[0] as EventOf<"ENGINE_START"> & { forked_from?: unknown };
    expect(start).toMatchObject({ run_id: "fork-2", work_dir: ws, agent_home: agent, config: { agent_name: "test-agent", model: "mock-model" } });
    expect(start.forked_from).toEqual({ run_id: "source", iteration: 2, seq: 12, hash: (sourceEvents[11] as { hash?: string }).hash ?? null });
    expect(start.trace_id).not.toBe((sourceEvents[0] as EventOf<"ENGINE_START">).trace_id);
    expect(events[9]).toMatchObject({ type: "ENGINE_END", run_id: "fork-2", status: "INTERRUPTED", final_iteration: 2 });
    expect(JSON.parse(result.stdout)).toMatchObject({ run_id: "fork-2", status: "INTERRUPTED", iterations: 2, forked_from: { run_id: "source", iteration: 2, seq: 12 }, copied: { events: 8, invocations: 2, tool_executions: 2, hooks: 0 } });

    // The records of iterations 1 and 2, and only those; their requests rebuild as the source's did.
    const fork = runPaths(ws, parseRunId("fork-2"));
    expect(readdirSync(fork.invocationsDir).filter((name) => name.endsWith(".json"))).toHaveLength(2);
    expect(requestsOf(ws, "fork-2")).toEqual(requestsOf(ws, "source").slice(0, 2));
    // Iteration 1's result (seq 5 in both journals) is the one long text these requests point at.
    expect(journalPointers(fork)).toEqual([5]);
    expect(readdirSync(fork.toolExecutionsDir)).toHaveLength(2);
    expect(JSON.parse(readFileSync(join(fork.runDir, "metadata.json"), "utf8"))).toMatchObject({ run_id: "fork-2", status: "INTERRUPTED", iterations: 2, initial_message: "Read the notes", work_dir: ws, journal_hash: (events[9] as { hash?: string }).hash });

    // A chain of its own, from its first line: verify checks it end to end, and the source's too.
    expect(events.every((event) => /^sha256:[0-9a-f]{64}$/.test((event as { hash?: string }).hash ?? ""))).toBe(true);
    expect(events.slice(1, 9).map((event) => (event as { hash?: string }).hash)).not.toContain((sourceEvents[2] as { hash?: string }).hash);
    const verified = await delta(["verify", "fork-2", "-w", ws, "--format", "json"]);
    expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
    expect((await delta(["verify", "source", "-w", ws])).exitCode).toBe(0);
  });

  it("goes on with continue -m from where it was forked, with the conversation of iterations 1..N", async () => {
    expect((await delta(["fork", "source", "--at", "1", "-w", ws, "--run-id", "fork-1"])).exitCode).toBe(0);
    const server = await serve([reply.text("Only one note, then")]);
    const result = await delta(["continue", "--run-id", "fork-1", "-w", ws, "-m", "Stop after one note", "--json"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ run_id: "fork-1", status: "COMPLETED", result: "Only one note, then" });
    expect(server.requests).toHaveLength(1);
    const messages = messagesOf(server.requests[0]!);
    expect(messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(messages[2]!.tool_calls?.[0]?.id).toBe("call_1");
    expect(messages[4]!.content).toBe("Stop after one note");
    expect(eventTypes(readEvents(ws, "fork-1")).slice(-4)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ENGINE_END"]);
  });

  it("ends COMPLETED at an iteration that answered, in a workspace of its own when -w names one, and says when it shares the source's", async () => {
    const other = join(root, "ws-other");
    const result = await delta(["fork", runDir(ws, "source"), "--at", "3", "-w", other, "--run-id", "fork-3"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Forked run source at iteration 3 into run fork-3 (COMPLETED) in ${other}`);
    expect(result.stderr).not.toContain("a fork never copies a workspace");
    expect(readEvents(other, "fork-3")[0]).toMatchObject({ work_dir: other });
    // Call 3's request points at iteration 2's result: seq 12 in the source, 9 in the fork (the source's ERROR, ENGINE_END and ENGINE_START left out).
    expect(journalPointers(runPaths(ws, parseRunId("source")))).toEqual([5, 12]);
    expect(journalPointers(runPaths(other, parseRunId("fork-3")))).toEqual([5, 9]);
    expect(readEvents(other, "fork-3")[8]).toMatchObject({ type: "ACTION_RESULT", iteration: 2, action_id: "call_2" });
    expect(requestsOf(other, "fork-3")).toEqual(requestsOf(ws, "source"));
    // Its requests name the source's run id ("note one in run source"): equal to a replay's of the source all the same.
    const again = join(root, "ws-again");
    const replayed = await delta(["run", "--agent", agent, "-w", again, "--run-id", "again", "--replay", runDir(ws, "source"), "Read the notes"]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    const diff = await delta(["diff", runDir(other, "fork-3"), runDir(again, "again"), "--json"]);
    expect(diff.exitCode, diff.stdout).toBe(0);
    expect(JSON.parse(diff.stdout)).toMatchObject({ equal: true, a: { model_calls: 3 }, b: { model_calls: 3 } });
    const show = await delta(["show", "fork-3", "-w", other]);
    expect(show.stdout).toContain("forked from run source at iteration 3 (seq 13 there)");
    expect(existsSync(join(other, "notes.txt"))).toBe(false);
    const shared = await delta(["fork", "source", "--at", "3", "-w", ws]);
    expect(shared.exitCode, shared.stderr).toBe(0);
    expect(shared.stderr).toContain(`The fork works in ${ws}, the workspace of run source as it is now, not as it was at iteration 3: a fork never copies a workspace.`);
  });

  it("refuses an iteration the run does not have, a taken run id and a missing --at, leaving nothing behind", async () => {
    const beyond = await delta(["fork", "source", "--at", "4", "-w", ws, "--run-id", "fork-4"]);
    expect(beyond.exitCode).toBe(126);
    expect(beyond.stderr).toContain("Run source has no iteration 4 to fork at: its iterations are 1 to 3.");
    expect(existsSync(runDir(ws, "fork-4"))).toBe(false);
    const taken = await delta(["fork", "source", "--at", "1", "-w", ws, "--run-id", "fork-2"]);
    expect(taken.exitCode).toBe(126);
    expect(taken.stderr).toContain("run id fork-2 already exists");
    const noAt = await delta(["fork", "source", "-w", ws]);
    expect(noAt.exitCode).toBe(126);
    expect(noAt.stderr).toContain("delta fork needs --at <iteration>");
    expect(readdirSync(join(ws, ".delta")).filter((name) => name.startsWith(".claim-"))).toEqual([]);
  });
});
