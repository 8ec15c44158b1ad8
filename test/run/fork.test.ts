// forkRun on a journal written by hand: a call run again after a crash keeps pointing at its earlier request once the seqs are renumbered; a journal written before the hash chain forks with a null hash.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { streamJournal } from "../../src/journal/reader.js";
import { forkRun } from "../../src/run/fork.js";
import { runPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";
import { setUpE2e, writeAgent } from "../e2e/harness.js";

const { root } = setUpE2e("delta-fork-unit-");

const AT = "2026-01-01T00:00:00.000Z";
const call = { id: "call_pay", name: "pay", arguments: JSON.stringify({ amount: 3 }) };
const thought = (iteration: number, toolCalls: (typeof call)[], content: string | null) => ({ type: "THOUGHT", iteration, content, tool_calls: toolCalls, usage: null, model: "m", finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop" });
const request = (extra: Record<string, unknown> = {}) => ({ type: "ACTION_REQUEST", iteration: 1, action_id: call.id, tool_name: call.name, tool_args: { amount: 3 }, resolved_command: ["pay", "3"], ...extra });

const hookResult = (record: string) => ({ type: "HOOK_RESULT", hook: "pre_tool_execution", iteration: 1, outcome: "continue", exit_code: 0, timed_out: false, started_at: AT, duration_ms: 1, record });

/** A source run whose first process failed before iteration 1, and whose second was killed mid-call: the third ran the call again (rerun_of). */
function writeSource(workDir: string, agentHome: string, hookRecord = "io/hooks/pre_tool_execution_20260101T000000000Z.json"): void {
  const start = { type: "ENGINE_START", run_id: "src", agent_home: agentHome, work_dir: workDir, config: { agent_name: "test-agent", model: "m" }, engine_version: "0.0.0" };
  const events = [
    start,
    { type: "USER_MESSAGE", content: "Pay the invoice" },
    { type: "ERROR", error_type: "MODEL_UNAVAILABLE", error_message: "no answer" },
    { type: "ENGINE_END", run_id: "src", status: "FAILED", final_iteration: 0 },
    start,
    thought(1, [call], null),
    request(),
    start,
    request({ rerun_of: 7 }),
    hookResult(hookRecord),
    { type: "ACTION_RESULT", iteration: 1, action_id: call.id, tool_name: call.name, status: "SUCCESS", observation_content: "paid", exit_code: 0, duration_ms: 5 },
    thought(2, [], "Paid"),
    { type: "ENGINE_END", run_id: "src", status: "COMPLETED", final_iteration: 2 },
  ];
  const paths = runPaths(workDir, parseRunId("src"));
  for (const dir of [paths.invocationsDir, paths.toolExecutionsDir, paths.hooksDir]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(paths.hooksDir, "pre_tool_execution_20260101T000000000Z.json"), "{}\n");
  writeFileSync(paths.journal, events.map((event, index) => `${JSON.stringify({ seq: index + 1, timestamp: AT, ...event })}\n`).join(""));
}

describe("forkRun", () => {
  it("points a call run again at its earlier request's new seq, and names an unchained source's last event with a null hash", async () => {
    const agentHome = writeAgent(root);
    const workDir = join(root, "ws");
    writeSource(workDir, agentHome);
    const outcome = await forkRun({ source: { runId: "src", paths: runPaths(workDir, parseRunId("src")) }, at: 1, runId: parseRunId("fork"), workDir, warn: () => {} });
    expect(outcome).toMatchObject({ status: "INTERRUPTED", iterations: 1, forkedFrom: { run_id: "src", iteration: 1, seq: 11, hash: null }, copied: { hooks: 1 } });

    const events: JournalEvent[] = [];
    streamJournal(runPaths(workDir, parseRunId("fork")).journal, (event) => events.push(event));
    expect(events.map((event) => `${event.seq} ${event.type}`)).toEqual(["1 ENGINE_START", "2 USER_MESSAGE", "3 THOUGHT", "4 ACTION_REQUEST", "5 ACTION_REQUEST", "6 HOOK_RESULT", "7 ACTION_RESULT", "8 ENGINE_END"]);
    const requests = events.filter((event): event is EventOf<"ACTION_REQUEST"> => event.type === "ACTION_REQUEST");
    // In the source the rerun named seq 7; that request is the fork's seq 4.
    expect(requests.map((event) => event.rerun_of)).toEqual([undefined, 4]);
  });

  it("refuses a journal whose hook result names a record outside io/hooks/, copying nothing there and leaving no run", async () => {
    const agentHome = writeAgent(root, {}, "agent-planted");
    const workDir = join(root, "planted", "ws");
    // The fork's folder is two levels deeper than the source's: the same relative path reaches two places.
    const forkDir = join(root, "planted", "a", "b", "ws");
    writeSource(workDir, agentHome, "../../../../secret.txt");
    writeFileSync(join(root, "secret.txt"), "not the run's\n");
    const fork = forkRun({ source: { runId: "src", paths: runPaths(workDir, parseRunId("src")) }, at: 1, runId: parseRunId("fork"), workDir: forkDir, warn: () => {} });
    await expect(fork).rejects.toThrow(`${runPaths(workDir, parseRunId("src")).journal}: the HOOK_RESULT at seq 10 names the record "../../../../secret.txt", which is not a file of io/hooks/`);
    expect(existsSync(join(root, "planted", "secret.txt"))).toBe(false);
    expect(existsSync(join(forkDir, ".delta", "fork"))).toBe(false);
  });
});
