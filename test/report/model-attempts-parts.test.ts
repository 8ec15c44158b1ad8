// The journal's model-call facts read back: failed attempts and their waits on the timeline and in show, the answered attempt after them, ask_human and hooks as what they are, and journals from before these fields.
import { describe, expect, it } from "vitest";
import type { JournalEvent, NewEvent } from "../../src/journal/events.js";
import { JournalEventSchema } from "../../src/journal/events.js";
import { eventDetails } from "../../src/report/html-events.js";
import { writeRunReport } from "../../src/report/html-run.js";
import { accountOf } from "../../src/report/run-account.js";
import { createEventFormatter } from "../../src/report/show-text.js";
import { textStyle } from "../../src/report/text-style.js";
import { timelineOf } from "../../src/report/timeline.js";
import { failedAttemptEvent } from "../../src/loop/failed-attempt.js";
import { runPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";

const at = (ms: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();
const T0 = Date.parse(at(0));

/** Events stamped at the given offsets (ms), numbered in order. */
function stamped(events: [number, NewEvent][]): JournalEvent[] {
  return events.map(([ms, event], index) => JournalEventSchema.parse({ ...event, seq: index + 1, timestamp: at(ms) }));
}

const start: NewEvent = { type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: { model: "m" }, engine_version: "0.1.0" };
const thought = (iteration: number, extra: Partial<NewEvent & { type: "THOUGHT" }> = {}): NewEvent => ({ type: "THOUGHT", iteration, content: "words", tool_calls: [], usage: null, model: "m", ...extra });
const attemptFailed = (attempt: number, startMs: number, retry: number | null): NewEvent => ({ type: "LLM_ATTEMPT_FAILED", iteration: 1, attempt, started_at: at(startMs), duration_ms: 20, reason: "HTTP 500", http_status: 500, server_message: "overloaded", retry_in_ms: retry });

/** A call that fails at 100 ms (waits 200), fails again at 320 ms (waits 300), and is answered at 700 ms. */
function retried(): JournalEvent[] {
  return stamped([
    [0, start],
    [1, { type: "USER_MESSAGE", content: "task" }],
    [120, attemptFailed(1, 100, 200)],
    [340, attemptFailed(2, 320, 300)],
    [700, thought(1, { started_at: at(100), duration_ms: 600, attempts: 3 })],
    [710, { type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 1 }],
  ]);
}

describe("the timeline of a retried call", () => {
  it("has a red bar per failed attempt, an amber wait after each retried one, and the answered attempt after the last wait", () => {
    const spans = timelineOf(accountOf("/w", "r", runPaths("/w", parseRunId("r")), retried(), null), []);
    expect(spans.map((span) => [span.kind, span.outcome, span.start - T0, span.durationMs, span.seq])).toEqual([
      ["model", "FAILED", 100, 20, 3],
      ["wait", "waiting", 120, 200, 3],
      ["model", "FAILED", 320, 20, 4],
      ["wait", "waiting", 340, 300, 4],
      ["model", "SUCCESS", 640, 60, 5],
    ]);
  });

  it("draws a call that failed for good up to the run's end, and the page says why first", () => {
    const events = stamped([
      [0, start],
      [1, { type: "USER_MESSAGE", content: "task" }],
      [120, attemptFailed(1, 100, 3000)],
      [3900, attemptFailed(2, 3120, null)],
      [3901, { type: "ERROR", error_type: "LLM_ERROR", error_message: "The model endpoint failed after 2 attempts: HTTP 500" }],
      [3902, { type: "ENGINE_END", run_id: "r", status: "FAILED", final_iteration: 0 }],
    ]);
    const account = accountOf("/w", "r", runPaths("/w", parseRunId("r")), events, null);
    const spans = timelineOf(account, []);
    expect(spans.filter((span) => span.kind === "model").map((span) => span.outcome)).toEqual(["FAILED", "FAILED"]);
    let page = "";
    writeRunReport(account, [], [], (visit) => events.forEach((event) => visit(event)), (text) => (page += text));
    const outcome = page.slice(page.indexOf("<header"), page.indexOf("</header>"));
    expect(outcome).toContain("FAILED");
    expect(outcome).toContain("The model endpoint failed after 2 attempts: HTTP 500");
    // The axis spans the whole run (3902 ms): the last attempt (3120–3140 ms) sits at 80% of the plot, inside it.
    const [, x, width] = page.match(/class="bar model outcome-FAILED" data-seq="4" x="([\d.]+)" y="\d+" width="([\d.]+)"/) ?? [];
    const end = Number(x) + Number(width);
    expect(end).toBeGreaterThan(70 + 0.75 * 920);
    expect(end).toBeLessThan(70 + 0.85 * 920);
  });

  it("times a THOUGHT from a journal written before these fields from its io record, or from the event before it", () => {
    const events = stamped([[0, start], [1, { type: "USER_MESSAGE", content: "task" }], [300, thought(1)], [310, { type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 1 }]]);
    const account = accountOf("/w", "r", runPaths("/w", parseRunId("r")), events, null);
    expect(timelineOf(account, []).map((span) => [span.start - T0, span.durationMs, span.label])).toEqual([[1, 299, "model call 1 (timed from the journal)"]]);
    expect(timelineOf(account, [{ iteration: 1, start: T0 + 50, durationMs: 200, file: "x.json" }]).map((span) => [span.start - T0, span.durationMs])).toEqual([[50, 200]]);
    expect(createEventFormatter(textStyle(false))(events[2]!).join("\n")).toMatch(/\[1\] +m\n/);
  });
});

describe("ask_human and hooks on the timeline", () => {
  it("draws ask_human from the question to the answer as a wait, and a hook in its iteration's row", () => {
    const events = stamped([
      [0, start],
      [10, thought(1, { tool_calls: [{ id: "a1", name: "ask_human", arguments: "{}" }], started_at: at(5), duration_ms: 5, attempts: 1 })],
      [20, { type: "ACTION_REQUEST", iteration: 1, action_id: "a1", tool_name: "ask_human", tool_args: {}, resolved_command: null }],
      [5000, { type: "HUMAN_INPUT_RECEIVED", iteration: 1, action_id: "a1", request_id: "q", response: "yes" }],
      [5001, { type: "ACTION_RESULT", iteration: 1, action_id: "a1", tool_name: "ask_human", status: "SUCCESS", observation_content: "yes", exit_code: 0, duration_ms: 0 }],
    ]);
    const spans = timelineOf(accountOf("/w", "r", runPaths("/w", parseRunId("r")), events, null), [], [{ hook: "on_iteration_start", iteration: 1, start: T0 + 2, durationMs: 2, outcome: "continue" }]);
    expect(spans.map((span) => [span.kind, span.outcome, span.start - T0, span.durationMs])).toEqual([
      ["hook", "continue", 2, 2],
      ["model", "SUCCESS", 5, 5],
      ["ask", "answered", 20, 4981],
    ]);
  });
});

describe("show", () => {
  it("prints a failed attempt in the run's timeline, with the server's words and the wait", () => {
    const format = createEventFormatter(textStyle(false));
    const [, , failed, , answered] = retried().map(format);
    expect(failed!.join("\n")).toMatch(/^ +\+0\.1s \[1\] +model attempt 1 failed · HTTP 500 "overloaded" · 20 ms · retry in 200 ms$/);
    expect(answered!.join("\n")).toMatch(/\[1\] +m · 600 ms \(attempt 3\)\n.*words/);
  });
});

describe("events in the report", () => {
  it("show a tool's output as text, its head first and the whole one click away", () => {
    const output = Array.from({ length: 30 }, (_, index) => `row ${index + 1}\tvalue`).join("\n");
    const [result] = stamped([[0, { type: "ACTION_RESULT", iteration: 1, action_id: "c", tool_name: "read", status: "FAILED", observation_content: output, exit_code: 1, duration_ms: 3 }]]);
    const text = eventDetails(result!, null).text;
    expect(text).toContain('<span class="status status-FAILED">FAILED</span>');
    expect(text).toContain("row 1\tvalue\nrow 2\tvalue");
    const head = text.slice(0, text.indexOf('<details class="whole">'));
    expect(head).toContain("row 20\tvalue");
    expect(head).not.toContain("row 21\tvalue");
    expect(text).toMatch(/<details class="whole"><summary>all 30 lines<\/summary><pre class="text output">row 1\tvalue[^]*row 30\tvalue<\/pre>/);
  });
});

describe("a failed attempt as journaled", () => {
  it("removes secrets from the reason and the server's words and bounds them", () => {
    const secret = "sk-live-0123456789abcdef";
    const event = failedAttemptEvent(
      2,
      { attempt: 1, startedAt: T0, durationMs: 5, reason: "ignored", retryInMs: 10, failure: { kind: "transient", reason: `connect failed for ${secret}`, status: 502, words: { message: `${"😀".repeat(400)} ${secret}`, code: "bad_gateway" } } },
      [secret],
    );
    const parsed = JournalEventSchema.parse({ ...event, seq: 1, timestamp: at(0) });
    expect(parsed).toMatchObject({ type: "LLM_ATTEMPT_FAILED", iteration: 2, attempt: 1, started_at: at(0), duration_ms: 5, reason: "connect failed for [REDACTED]", http_status: 502, server_code: "bad_gateway", retry_in_ms: 10 });
    expect(JSON.stringify(parsed)).not.toContain(secret);
    const message = (parsed as { server_message: string }).server_message;
    expect(message.length).toBeLessThanOrEqual(501);
    // Cut between characters, never inside a surrogate pair.
    expect(message).toMatch(/^(😀)+…$/u);
  });
});
