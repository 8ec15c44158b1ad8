// The run's state folded from its journal, at once or incrementally as the journal grows.
import { describe, expect, it } from "vitest";
import { deriveRunState } from "../support/journal-read.js";
import type { JournalEvent } from "../../src/journal/events.js";
import { createFoldTracker } from "../../src/journal/fold.js";
import { trackRunState, type RunState } from "../../src/journal/run-state.js";

const at = "2026-01-01T00:00:00.000Z";
const calls = [
  { id: "c1", name: "ls", arguments: "{}" },
  { id: "c2", name: "ask_human", arguments: '{"prompt":"ok?"}' },
];
const journal: JournalEvent[] = [
  { seq: 1, timestamp: at, type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: {}, engine_version: "0" },
  { seq: 2, timestamp: at, type: "USER_MESSAGE", content: "task" },
  { seq: 3, timestamp: at, type: "THOUGHT", iteration: 1, content: null, tool_calls: calls, usage: { input_tokens: 5, output_tokens: 2 }, model: "m" },
  { seq: 4, timestamp: at, type: "ACTION_REQUEST", iteration: 1, action_id: "c1", tool_name: "ls", tool_args: {}, resolved_command: ["ls"] },
  { seq: 5, timestamp: at, type: "ACTION_RESULT", iteration: 1, action_id: "c1", tool_name: "ls", status: "SUCCESS", observation_content: "a", exit_code: 0, duration_ms: 1 },
  { seq: 6, timestamp: at, type: "ACTION_REQUEST", iteration: 1, action_id: "c2", tool_name: "ask_human", tool_args: {}, resolved_command: null },
  { seq: 7, timestamp: at, type: "HUMAN_INPUT_REQUEST", iteration: 1, action_id: "c2", request_id: "q1", prompt: "ok?", input_type: "text", sensitive: false },
  { seq: 8, timestamp: at, type: "ENGINE_END", run_id: "r", status: "WAITING_FOR_INPUT", final_iteration: 1 },
  { seq: 9, timestamp: at, type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: {}, engine_version: "0" },
  { seq: 10, timestamp: at, type: "HUMAN_INPUT_RECEIVED", iteration: 1, action_id: "c2", request_id: "q1", response: "yes" },
  { seq: 11, timestamp: at, type: "ACTION_RESULT", iteration: 1, action_id: "c2", tool_name: "ask_human", status: "SUCCESS", observation_content: "yes", exit_code: null, duration_ms: 0 },
  { seq: 12, timestamp: at, type: "THOUGHT", iteration: 2, content: "done", tool_calls: [], usage: { input_tokens: 7, output_tokens: 3 }, model: "m2" },
  { seq: 13, timestamp: at, type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 2 },
];

describe("deriveRunState", () => {
  it("reads status, iterations, pending calls, the open question and usage from the journal", () => {
    const waiting = deriveRunState(journal.slice(0, 8));
    expect(waiting).toMatchObject({ status: "WAITING_FOR_INPUT", iterations: 1, waiting: { request_id: "q1" }, initialMessage: "task" });
    expect(waiting.pending).toEqual([{ call: calls[1], iteration: 1, index: 1, requestSeq: 6, answer: null }]);
    // Killed between the answer and its result: the answer is kept for the result resume records.
    expect(deriveRunState(journal.slice(0, 10)).pending).toEqual([{ call: calls[1], iteration: 1, index: 1, requestSeq: 6, answer: "yes" }]);
    const done = deriveRunState(journal);
    expect(done).toMatchObject({ status: "COMPLETED", iterations: 2, pending: [], waiting: null, usage: { total: { input_tokens: 12, output_tokens: 5, calls: 2 } } });
    expect([...done.usage.byModel].map(([model, totals]) => [model, totals.input_tokens, totals.output_tokens])).toEqual([["m", 5, 2], ["m2", 7, 3]]);
  });
});

/** The run state on a fold tracker fed each event of the growing journal once, as the run files' reader feeds it. */
function createRunStateTracker(): (events: readonly JournalEvent[]) => RunState {
  const tracker = createFoldTracker();
  const state = trackRunState(tracker);
  let seen = 0;
  return (events) => {
    for (; seen < events.length; seen += 1) tracker.see(events[seen]!);
    return state();
  };
}

describe("trackRunState on a fold tracker", () => {
  it("gives what deriveRunState gives at every length of a growing journal", () => {
    const track = createRunStateTracker();
    for (let length = 0; length <= journal.length; length += 1) {
      expect(track(journal.slice(0, length))).toEqual(deriveRunState(journal.slice(0, length)));
    }
  });

  it("returns states of their own: a later fold does not change an earlier answer", () => {
    const track = createRunStateTracker();
    const early = track(journal.slice(0, 4));
    track(journal);
    expect(early).toMatchObject({ iterations: 1, usage: { total: { input_tokens: 5, output_tokens: 2 } } });
    expect(early.usage.byModel.get("m")).toMatchObject({ input_tokens: 5, output_tokens: 2, calls: 1 });
    expect(early.pending.map((pending) => pending.call.id)).toEqual(["c1", "c2"]);
  });
});
