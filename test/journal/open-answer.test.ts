// Which final answer the run never ended on: the one a continue finishes the run with instead of asking the model again.
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { deriveRunState } from "../support/journal-read.js";

const at = "2026-01-01T00:00:00.000Z";
const base: JournalEvent[] = [
  { seq: 1, timestamp: at, type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: {}, engine_version: "t" },
  { seq: 2, timestamp: at, type: "USER_MESSAGE", content: "task" },
  { seq: 3, timestamp: at, type: "THOUGHT", iteration: 1, content: "the answer", tool_calls: [], usage: null, model: "m" },
];
let seq = base.length;
const next = <E extends Record<string, unknown>>(event: E) => ({ seq: (seq += 1), timestamp: at, ...event }) as unknown as JournalEvent;
const end = (status: string) => next({ type: "ENGINE_END", run_id: "r", status, final_iteration: 1 });
const error = (type: string) => next({ type: "ERROR", error_type: type, error_message: "…" });
const openAnswerAfter = (...after: JournalEvent[]) => deriveRunState([...base, ...after]).openAnswer?.thought.content ?? null;

describe("the open answer", () => {
  it("is the last reply without tool calls while nothing decided it: no end, an interrupted end, an engine error, a new start", () => {
    expect(openAnswerAfter()).toBe("the answer");
    expect(openAnswerAfter(error("ORPHANED_RUN"), end("INTERRUPTED"), next({ type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: {}, engine_version: "t" }))).toBe("the answer");
    expect(openAnswerAfter(error("ENGINE_ERROR"), end("FAILED"))).toBe("the answer");
  });

  it("is none once the run ended COMPLETED on it, its schema refused it, or a message followed it", () => {
    expect(openAnswerAfter(end("COMPLETED"))).toBeNull();
    expect(openAnswerAfter(error("OUTPUT_INVALID"), end("FAILED"))).toBeNull();
    expect(openAnswerAfter(next({ type: "USER_MESSAGE", content: "more" }))).toBeNull();
  });

  it("knows whether its on_iteration_end hook's outcome was journaled", () => {
    const hook = next({ type: "HOOK_RESULT", hook: "on_iteration_end", iteration: 1, outcome: "continue", exit_code: 0, timed_out: false, started_at: at, duration_ms: 1, record: "io/hooks/x.json" });
    expect(deriveRunState([...base, hook]).openAnswer).toMatchObject({ iterationEndRan: true });
    expect(deriveRunState(base).openAnswer).toMatchObject({ iterationEndRan: false });
  });

  it("is none when the last reply asked for tools", () => {
    const calling = { ...base[2]!, tool_calls: [{ id: "c", name: "t", arguments: "{}" }] } as JournalEvent;
    expect(deriveRunState([base[0]!, base[1]!, calling]).openAnswer).toBeNull();
  });
});
