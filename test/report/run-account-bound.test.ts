// A run's account is bounded whatever the journal's size: it counts every iteration and keeps the timing of the last 1,000.
import { describe, expect, it } from "vitest";
import type { JournalEvent, NewEvent } from "../../src/journal/events.js";
import { accountOf } from "../../src/report/run-account.js";
import { runPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";

const ITERATIONS = 2_500;

/** A run of ITERATIONS tool calls, a failed attempt before the first and the last, and its end. */
function longRun(): JournalEvent[] {
  const events: NewEvent[] = [
    { type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: { agent_name: "demo", model: "m" }, engine_version: "0.1.0" },
    { type: "USER_MESSAGE", content: "task" },
  ];
  for (let iteration = 1; iteration <= ITERATIONS; iteration += 1) {
    if (iteration === 1 || iteration === ITERATIONS) {
      events.push({ type: "LLM_ATTEMPT_FAILED", iteration, attempt: 1, started_at: new Date(0).toISOString(), duration_ms: 5, reason: "HTTP 500", retry_in_ms: 10 });
    }
    events.push(
      { type: "THOUGHT", iteration, content: "x".repeat(1000), tool_calls: [{ id: `c${iteration}`, name: "echo", arguments: "{}" }], usage: { input_tokens: 10, output_tokens: 2 }, model: "m" },
      { type: "ACTION_REQUEST", iteration, action_id: `c${iteration}`, tool_name: "echo", tool_args: {}, resolved_command: ["echo"] },
      { type: "ACTION_RESULT", iteration, action_id: `c${iteration}`, tool_name: "echo", status: "SUCCESS", observation_content: "y".repeat(1000), exit_code: 0, duration_ms: 4 },
    );
  }
  events.push({ type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: ITERATIONS });
  return events.map((event, index) => ({ ...event, seq: index + 1, timestamp: new Date(index).toISOString() }) as JournalEvent);
}

describe("a run's account", () => {
  it("counts every iteration, tool call, failed attempt and token, and keeps the timing of the last 1,000 iterations only", () => {
    const account = accountOf("/w", "r", runPaths("/w", parseRunId("r")), longRun(), null);
    expect(account.iterationCount).toBe(ITERATIONS);
    expect(account.toolCalls).toBe(ITERATIONS);
    expect(account.failedAttemptCount).toBe(2);
    expect(account.usage).toMatchObject({ input_tokens: 10 * ITERATIONS, output_tokens: 2 * ITERATIONS });
    expect(account.iterations.map(({ iteration }) => iteration)).toEqual(Array.from({ length: 1_000 }, (_, index) => ITERATIONS - 999 + index));
    expect(account.failedAttempts.map(({ iteration }) => iteration)).toEqual([ITERATIONS]);
    // Facts, not text: no thought's content or tool's output is kept.
    expect(JSON.stringify(account)).not.toMatch(/xxxx|yyyy/);
  });
});
