// The span fold and trace ids on their own: old journals, determinism, id derivation and TRACEPARENT parsing.
import { join } from "node:path";
import { readJournal } from "../support/journal-read.js";
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";

import { createSpanFold, foldJournalSpans, type TraceSpan } from "../../src/trace/span-fold.js";
import { journalTraceOf, parseTraceParent, spanIdOf } from "../../src/trace/trace-ids.js";

const OLD_JOURNAL = join("test", "fixtures", "runs", "old-format-run", "work", ".delta", "old-format-run", "journal.jsonl");

const start = (over: Partial<JournalEvent> = {}): JournalEvent =>
  ({ seq: 1, timestamp: "2026-01-01T00:00:00.000Z", type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: { agent_name: "x", model: "m" }, engine_version: "0", ...over }) as JournalEvent;

/** The fold over events in hand, as the live trace applies it. */
function spansOf(events: readonly JournalEvent[], options: { captureContent: boolean }): TraceSpan[] {
  const fold = createSpanFold(options);
  return [...events.flatMap((event) => fold.push(event)), ...fold.finish()];
}

describe("trace ids", () => {
  it("a journal written before trace ids existed gets one derived trace id, the same on every export, and differing by workspace", () => {
    const events = readJournal(OLD_JOURNAL);
    expect(events[0]).not.toHaveProperty("trace_id");
    const trace = journalTraceOf(events[0])!;
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
    const once = spansOf(events, { captureContent: false });
    expect(once.length).toBeGreaterThan(0);
    expect(new Set(once.map((span) => span.traceId))).toEqual(new Set([trace.traceId]));
    // The journal streamed from its file gives the same spans as the events in hand.
    const streamed: TraceSpan[] = [];
    foldJournalSpans(OLD_JOURNAL, { captureContent: false }, (span) => streamed.push(span));
    expect(streamed).toEqual(once);
    expect(journalTraceOf(start({ work_dir: "/w1" }))!.traceId).not.toBe(journalTraceOf(start({ work_dir: "/w2" }))!.traceId);
  });

  it("a journaled trace id and parent win over any derivation", () => {
    expect(journalTraceOf(start({ trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", parent_span_id: "00f067aa0ba902b7" }))).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentSpanId: "00f067aa0ba902b7", parentSampled: true });
  });

  it("span ids derive from (trace id, seq): stable, 16 hex digits, distinct across a long run's seqs and across traces", () => {
    const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const ids = Array.from({ length: 20_000 }, (_, index) => spanIdOf(trace, index + 1));
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(spanIdOf(trace, 7)).toBe(spanIdOf(trace, 7));
    expect(spanIdOf("0af7651916cd43dd8448eb211c80319c", 7)).not.toBe(spanIdOf(trace, 7));
  });

  it("TRACEPARENT: a valid W3C value is read with its sampled flag; invalid ones are ignored", () => {
    expect(parseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true });
    expect(parseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled).toBe(false);
    for (const bad of [undefined, "", "garbage", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"]) {
      expect(parseTraceParent(bad), String(bad)).toBeNull();
    }
  });
});

describe("the span fold", () => {
  it("a journal that ends mid-call leaves its open spans ERROR, incomplete, ended at the last journaled time", () => {
    const events: JournalEvent[] = [
      start(),
      { seq: 2, timestamp: "2026-01-01T00:00:01.000Z", type: "USER_MESSAGE", content: "go" },
      { seq: 3, timestamp: "2026-01-01T00:00:02.000Z", type: "THOUGHT", iteration: 1, content: null, tool_calls: [{ id: "c1", name: "t", arguments: "{}" }], usage: null, model: "m" },
      { seq: 4, timestamp: "2026-01-01T00:00:03.000Z", type: "ACTION_REQUEST", iteration: 1, action_id: "c1", tool_name: "t", tool_args: {}, resolved_command: ["t"] },
    ];
    const spans = spansOf(events, { captureContent: false });
    const open = spans.filter((span) => span.attributes["delta.run.incomplete"] === true);
    expect(open.map((span) => span.name).sort()).toEqual(["execute_tool t", "invoke_agent x"]);
    for (const span of open) {
      expect(span.status.code).toBe("ERROR");
      expect(span.endMs).toBe(Date.parse("2026-01-01T00:00:03.000Z"));
    }
  });

  it("a model call whose every attempt failed is one ERROR chat span carrying each attempt as an event", () => {
    const events: JournalEvent[] = [
      start(),
      { seq: 2, timestamp: "2026-01-01T00:00:01.000Z", type: "LLM_ATTEMPT_FAILED", iteration: 1, attempt: 1, started_at: "2026-01-01T00:00:00.500Z", duration_ms: 100, reason: "HTTP 500", http_status: 500, retry_in_ms: 10 },
      { seq: 3, timestamp: "2026-01-01T00:00:02.000Z", type: "LLM_ATTEMPT_FAILED", iteration: 1, attempt: 2, started_at: "2026-01-01T00:00:01.500Z", duration_ms: 100, reason: "HTTP 500", http_status: 500, retry_in_ms: null },
      { seq: 4, timestamp: "2026-01-01T00:00:03.000Z", type: "ERROR", error_type: "LLM_ERROR", error_message: "failed" },
      { seq: 5, timestamp: "2026-01-01T00:00:04.000Z", type: "ENGINE_END", run_id: "r", status: "FAILED", final_iteration: 0 },
    ];
    const spans = spansOf(events, { captureContent: false });
    const chat = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat")!;
    expect(chat.status.code).toBe("ERROR");
    expect(chat.events.map((event) => event.attributes["delta.attempt"])).toEqual([1, 2]);
    expect(chat.spanId).toBe(spanIdOf(journalTraceOf(events[0])!.traceId, 2));
    expect(spans.find((span) => span.name === "invoke_agent x")!.status.code).toBe("ERROR");
  });

  it("a call a fallback answered is a chat span naming the fallback's provider, model and endpoint, not the primary's", () => {
    const events: JournalEvent[] = [
      start({ config: { agent_name: "x", model: "claude-busy", provider: "anthropic" } } as Partial<JournalEvent>),
      { seq: 2, timestamp: "2026-01-01T00:00:02.000Z", type: "THOUGHT", iteration: 1, content: "done", tool_calls: [], usage: null, model: "gpt-new-2026", answered_by: { provider: "openai-responses", base_url: "https://api.openai.com/v1", model: "gpt-new" } },
      { seq: 3, timestamp: "2026-01-01T00:00:03.000Z", type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 1 },
    ];
    const chat = spansOf(events, { captureContent: false }).find((span) => span.attributes["gen_ai.operation.name"] === "chat")!;
    expect(chat.name).toBe("chat gpt-new");
    expect(chat.attributes).toMatchObject({ "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-new", "gen_ai.response.model": "gpt-new-2026", "delta.llm.endpoint": "https://api.openai.com/v1" });
  });
});

describe("hooks, window moves and hosts", () => {
  it("an ask_human answered within one invocation (-i) is a span from the question to the answer, under its tool's span; its prompt only with content", () => {
    const events: JournalEvent[] = [
      start(),
      { seq: 2, timestamp: "2026-01-01T00:00:01.000Z", type: "THOUGHT", iteration: 1, content: null, tool_calls: [{ id: "c1", name: "ask_human", arguments: "{}" }], usage: null, model: "m" },
      { seq: 3, timestamp: "2026-01-01T00:00:02.000Z", type: "ACTION_REQUEST", iteration: 1, action_id: "c1", tool_name: "ask_human", tool_args: { prompt: "Colour?" }, resolved_command: null },
      { seq: 4, timestamp: "2026-01-01T00:00:02.500Z", type: "HUMAN_INPUT_REQUEST", iteration: 1, action_id: "c1", request_id: "q1", prompt: "Colour?", input_type: "text", sensitive: false },
      { seq: 5, timestamp: "2026-01-01T00:00:09.000Z", type: "HUMAN_INPUT_RECEIVED", iteration: 1, action_id: "c1", request_id: "q1", response: "blue" },
      { seq: 6, timestamp: "2026-01-01T00:00:09.100Z", type: "ACTION_RESULT", iteration: 1, action_id: "c1", tool_name: "ask_human", status: "SUCCESS", observation_content: "blue", exit_code: null, duration_ms: 7100 },
      { seq: 7, timestamp: "2026-01-01T00:00:10.000Z", type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 1 },
    ];
    const spans = spansOf(events, { captureContent: false });
    const wait = spans.find((span) => span.name === "ask_human")!;
    const tool = spans.find((span) => span.name === "execute_tool ask_human")!;
    expect([wait.startMs, wait.endMs]).toEqual([Date.parse("2026-01-01T00:00:02.500Z"), Date.parse("2026-01-01T00:00:09.000Z")]);
    expect(wait.parentSpanId).toBe(tool.spanId);
    expect(wait.attributes).toMatchObject({ "delta.human_input.answered": true, "delta.human_input.request_id": "q1" });
    expect(JSON.stringify(spans)).not.toContain("Colour?");
    expect(JSON.stringify(spansOf(events, { captureContent: true }))).toContain("Colour?");
  });

  it("a window move is an event on its invocation's span", () => {
    const events: JournalEvent[] = [
      start(),
      { seq: 2, timestamp: "2026-01-01T00:00:01.000Z", type: "CONTEXT_WINDOW", iteration: 21, reason: "max_iterations", first_iteration: 11, dropped_from: 1, dropped_to: 10, limit: 20 },
      { seq: 3, timestamp: "2026-01-01T00:00:02.000Z", type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 21 },
    ];
    const [invocation] = spansOf(events, { captureContent: false });
    expect(invocation!.events).toEqual([{
      name: "delta.context.window_moved",
      timeMs: Date.parse("2026-01-01T00:00:01.000Z"),
      attributes: { "delta.iteration": 21, "delta.window.reason": "max_iterations", "delta.window.first_iteration": 11, "delta.window.dropped_from": 1, "delta.window.dropped_to": 10, "delta.window.limit": 20 },
    }]);
  });

  it("a hook's outcome is an event on its invocation's span, with no content; each span names the host of its invocation", () => {
    const events: JournalEvent[] = [
      start({ config: { agent_name: "x", model: "m", hostname: "builder-1" } }),
      { seq: 2, timestamp: "2026-01-01T00:00:01.000Z", type: "HOOK_RESULT", hook: "pre_llm_request", iteration: 1, outcome: "block", exit_code: 2, timed_out: false, started_at: "2026-01-01T00:00:00.500Z", duration_ms: 250, record: "io/hooks/pre_llm_request_x.json" },
      { seq: 3, timestamp: "2026-01-01T00:00:02.000Z", type: "ERROR", error_type: "HOOK_BLOCKED", error_message: "no" },
      { seq: 4, timestamp: "2026-01-01T00:00:03.000Z", type: "ENGINE_END", run_id: "r", status: "FAILED", final_iteration: 0 },
      start({ seq: 5, timestamp: "2026-01-01T00:01:00.000Z", config: { agent_name: "x", model: "m", hostname: "builder-2" } }),
      { seq: 6, timestamp: "2026-01-01T00:01:01.000Z", type: "THOUGHT", iteration: 1, content: "ok", tool_calls: [], usage: null, model: "m" },
      { seq: 7, timestamp: "2026-01-01T00:01:02.000Z", type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 1 },
    ];
    const spans = spansOf(events, { captureContent: true });
    const [first, second] = spans.filter((span) => span.name === "invoke_agent x").sort((a, b) => a.startMs - b.startMs);
    expect(first!.events).toEqual([{
      name: "delta.hook",
      timeMs: Date.parse("2026-01-01T00:00:00.750Z"),
      attributes: { "delta.hook.name": "pre_llm_request", "delta.hook.outcome": "block", "delta.hook.exit_code": 2, "delta.hook.timed_out": false, "delta.hook.duration_ms": 250, "delta.hook.record": "io/hooks/pre_llm_request_x.json", "delta.iteration": 1 },
    }]);
    expect(first!.hostName).toBe("builder-1");
    expect(second!.hostName).toBe("builder-2");
    expect(spans.find((span) => span.name === "chat m")!.hostName).toBe("builder-2");
    // A journal from before hosts were recorded names none (the exporting machine is not the one that ran it).
    expect(spansOf([start(), { seq: 2, timestamp: "2026-01-01T00:00:01.000Z", type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 0 }], { captureContent: false })[0]!.hostName).toBeNull();
  });
});
