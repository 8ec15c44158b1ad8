// The windowing rule as a pure function of events and budget: blocks, jumps to half, journaled moves, calibration.
import { describe, expect, it } from "vitest";
import { applyLimits, windowEvent, windowJournal, type JournalBudget } from "../../src/context/window-rule.js";
import type { WindowState } from "../../src/journal/window-state.js";
import { shownJournalOf } from "../support/journal-read.js";
import { journalSegments, type JournalEntry } from "../../src/context/journal-messages.js";
import type { ChatMessage } from "../../src/conversation.js";
import type { JournalEvent, NewEvent, Usage } from "../../src/journal/events.js";

const timestamp = "2025-01-01T00:00:00.000Z";

/** A growing journal: each iteration is a THOUGHT with one call and its result of `size` characters. */
class Journal {
  events: JournalEvent[] = [];
  add(event: NewEvent): JournalEvent {
    const full = { ...event, seq: this.events.length + 1, timestamp } as JournalEvent;
    this.events.push(full);
    return full;
  }
  user(content: string): void {
    this.add({ type: "USER_MESSAGE", content });
  }
  iteration(n: number, size = 10, usage: Usage | null = null, estimated?: number): void {
    this.add({ type: "THOUGHT", iteration: n, content: `t${n}`, tool_calls: [{ id: `c${n}`, name: "read", arguments: "{}" }], usage, model: "m", ...(estimated !== undefined ? { estimated_input_tokens: estimated } : {}) });
    this.add({ type: "ACTION_REQUEST", iteration: n, action_id: `c${n}`, tool_name: "read", tool_args: {}, resolved_command: ["read"] });
    this.add({ type: "ACTION_RESULT", iteration: n, action_id: `c${n}`, tool_name: "read", status: "SUCCESS", observation_content: "x".repeat(size), exit_code: 0, duration_ms: 1 });
  }
}

/** One token per character of content: sizes the tests can reason about. */
/** The window state the journal's events fold to (the run files fold it as they read). */
const windowState = (events: readonly JournalEvent[]): WindowState => shownJournalOf(events).window;

const chars = (entry: JournalEntry): number => entry.message.content?.length ?? 0;

/** The window of a whole journal, as a build takes it: its segments from the window state's first iteration on. */
function windowOf(events: JournalEvent[], budget: JournalBudget, size: (entry: JournalEntry) => number, state: WindowState = windowState(events)) {
  return windowJournal(journalSegments(events, state.first), budget, size, state);
}

/** Builds the window the way the engine does each iteration: a move is journaled before the request. */
function build(journal: Journal, budget: JournalBudget, iteration: number): ChatMessage[] {
  const window = windowOf(journal.events, budget, chars);
  if (window.move) journal.add(windowEvent(iteration, window.move, 1));
  return window.messages;
}

function shownIterations(messages: ChatMessage[]): string[] {
  return messages.flatMap((message) => (message.role === "assistant" ? [message.content ?? ""] : []));
}

function isPrefix(previous: ChatMessage[], next: ChatMessage[]): boolean {
  return previous.every((message, index) => JSON.stringify(message) === JSON.stringify(next[index]));
}

describe("applyLimits", () => {
  const blocks = (...tokens: number[]) => tokens.map((size, index) => ({ iteration: index + 1, tokens: size }));

  it("keeps every block while each limit holds", () => {
    expect(applyLimits(blocks(10, 10, 10, 10), 5, [{ reason: "max_iterations", limit: 4 }, { reason: "max_tokens", limit: 45 }])).toEqual({ start: 0, move: null });
  });

  it("past an iteration limit N keeps the last ⌈N/2⌉ iterations", () => {
    expect(applyLimits(blocks(1, 1, 1, 1, 1), 0, [{ reason: "max_iterations", limit: 4 }])).toEqual({ start: 3, move: { reason: "max_iterations", limit: 4, from: 0, to: 3 } });
    expect(applyLimits(blocks(1, 1, 1, 1, 1, 1, 1, 1), 0, [{ reason: "max_iterations", limit: 7 }]).start).toBe(4);
  });

  it("past a token limit keeps the last iterations that fit in half of what the user messages leave", () => {
    // 50 fixed + 10 × 100 > 600; half of the 550 left is 275: the last two blocks (200) fit, three (300) do not.
    const { start, move } = applyLimits(blocks(...Array(10).fill(100)), 50, [{ reason: "max_tokens", limit: 600 }]);
    expect(start).toBe(8);
    expect(move).toMatchObject({ reason: "max_tokens", from: 0, to: 8 });
  });

  it("always keeps the last iteration, even when it alone is over the limit", () => {
    expect(applyLimits(blocks(10, 10, 500), 0, [{ reason: "context_window", limit: 100 }]).start).toBe(2);
    expect(applyLimits(blocks(10, 10, 10), 1_000, [{ reason: "max_tokens", limit: 100 }]).start).toBe(2);
  });

  it("applies the limits in turn, a later one moving further, and reports the last reason with the whole range", () => {
    const result = applyLimits(blocks(...Array(10).fill(10)), 0, [{ reason: "max_iterations", limit: 8 }, { reason: "context_window", limit: 50 }]);
    // max_iterations keeps 4 (start 6, 40 tokens ≤ 50); then 40 ≤ 50 holds: no second move.
    expect(result).toEqual({ start: 6, move: { reason: "max_iterations", limit: 8, from: 0, to: 6 } });
    const tighter = applyLimits(blocks(...Array(10).fill(10)), 0, [{ reason: "max_iterations", limit: 8 }, { reason: "context_window", limit: 30 }]);
    expect(tighter).toEqual({ start: 9, move: { reason: "context_window", limit: 30, from: 0, to: 9 } });
  });

  it("does nothing with no iterations", () => {
    expect(applyLimits([], 1_000, [{ reason: "max_tokens", limit: 1 }])).toEqual({ start: 0, move: null });
  });
});

describe("windowJournal", () => {
  it("moves in jumps: between them every request starts with the previous one, byte for byte", () => {
    const journal = new Journal();
    journal.user("task");
    const requests: ChatMessage[][] = [];
    for (let n = 1; n <= 60; n += 1) {
      requests.push(build(journal, { maxIterations: 20 }, n));
      journal.iteration(n);
    }
    const breaks = requests.slice(1).filter((request, index) => !isPrefix(requests[index]!, request)).length;
    // 20 shown, then 10 after each jump: the window moves at iterations 22, 33, 44 and 55 only.
    expect(breaks).toBe(4);
    const moves = journal.events.filter((event) => event.type === "CONTEXT_WINDOW");
    expect(moves.map((event) => event.type === "CONTEXT_WINDOW" && [event.iteration, event.dropped_from, event.dropped_to, event.first_iteration])).toEqual([
      [22, 1, 11, 12],
      [33, 12, 22, 23],
      [44, 23, 33, 34],
      [55, 34, 44, 45],
    ]);
  });

  it("never splits a call from its result, never reorders, and keeps every user message", () => {
    const journal = new Journal();
    journal.user("task");
    for (let n = 1; n <= 30; n += 1) {
      if (n % 7 === 0) journal.user(`note ${n}`);
      const messages = build(journal, { maxTokens: 400 }, n);
      messages.forEach((message, index) => {
        if (message.role === "assistant") expect(messages[index + 1]).toMatchObject({ role: "tool", tool_call_id: message.tool_calls![0]!.id });
        if (message.role === "tool") expect(messages[index - 1]).toMatchObject({ role: "assistant" });
      });
      expect(messages.filter((message) => message.role === "user").map((message) => message.content)).toEqual(["task", ...[7, 14, 21, 28].filter((k) => k <= n).map((k) => `note ${k}`)]);
      const order = shownIterations(messages).map((text) => Number(text.slice(1)));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      journal.iteration(n, 20 + (n % 5) * 10);
    }
  });

  it("keeps the journal within max_tokens, counted as the budget's tokens", () => {
    const journal = new Journal();
    journal.user("task");
    for (let n = 1; n <= 50; n += 1) {
      const window = windowOf(journal.events, { maxTokens: 500 }, chars);
      expect(window.rawTokens).toBeLessThanOrEqual(500);
      if (window.move) journal.add(windowEvent(n, window.move, 1));
      journal.iteration(n, 40);
    }
  });

  it("starts from the last journaled move, and a replayed journal gives the same windows", () => {
    const journal = new Journal();
    journal.user("task");
    const requests: ChatMessage[][] = [];
    for (let n = 1; n <= 25; n += 1) {
      requests.push(build(journal, { maxTokens: 300 }, n));
      journal.iteration(n, 30);
    }
    // Rebuilding each request from the journal as it was then gives exactly what was sent.
    const lengthAt = (iteration: number) => journal.events.findIndex((event) => event.type === "THOUGHT" && event.iteration === iteration);
    for (let n = 2; n <= 25; n += 1) {
      const before = journal.events.slice(0, lengthAt(n));
      expect(windowOf(before, { maxTokens: 300 }, chars).messages).toEqual(requests[n - 1]);
    }
  });

  it("a window the server forced is journaled as an overflow", () => {
    const journal = new Journal();
    journal.user("task");
    for (let n = 1; n <= 10; n += 1) journal.iteration(n, 50);
    const window = windowOf(journal.events, { windowTokens: 200, overflow: true }, chars);
    expect(window.move).toMatchObject({ reason: "overflow", droppedFrom: 1 });
    const event = windowEvent(11, window.move!, 1, { window_tokens: 900, sent_estimate: 1_000 });
    expect(event).toMatchObject({ type: "CONTEXT_WINDOW", reason: "overflow", overflow: { window_tokens: 900 }, tokens_after: window.rawTokens });
  });

  it("compares calibrated counts with the limits", () => {
    const journal = new Journal();
    journal.user("task");
    for (let n = 1; n <= 4; n += 1) journal.iteration(n, 100);
    // 4 + 4 × (2 + 100) = 412 raw: within 500 as counted, over it once the provider's count (×1.5) is known.
    expect(windowOf(journal.events, { maxTokens: 500 }, chars).move).toBeNull();
    const calibrated = windowOf(journal.events, { maxTokens: 500 }, chars, { first: 1, learnedWindow: null, calibration: 1.5, lastEstimate: null });
    expect(calibrated.move).toMatchObject({ reason: "max_tokens", limit: 500 });
    expect(calibrated.rawTokens * 1.5).toBeLessThanOrEqual(500);
  });
});

describe("windowState", () => {
  it("calibrates from the last THOUGHT that has both counts, never below the engine's own count, at most ×4", () => {
    const journal = new Journal();
    journal.user("task");
    expect(windowState(journal.events)).toEqual({ first: 1, learnedWindow: null, calibration: 1, lastEstimate: null });
    journal.iteration(1, 10, { input_tokens: 1_200, output_tokens: 5 }, 1_000);
    expect(windowState(journal.events).calibration).toBeCloseTo(1.2);
    journal.iteration(2, 10, { input_tokens: 800, output_tokens: 5 }, 1_000);
    expect(windowState(journal.events).calibration).toBe(1);
    journal.iteration(3, 10, { input_tokens: 90_000, output_tokens: 5 }, 1_000);
    expect(windowState(journal.events).calibration).toBe(4);
    journal.iteration(4, 10, { input_tokens: 90_000, output_tokens: 5 });
    expect(windowState(journal.events).calibration).toBe(4);
  });

  it("reads the first iteration, the learned window and a believable server count from the last overflow", () => {
    const journal = new Journal();
    for (let n = 1; n <= 3; n += 1) journal.iteration(n);
    journal.add({ type: "CONTEXT_WINDOW", iteration: 4, reason: "overflow", first_iteration: 3, dropped_from: 1, dropped_to: 2, limit: 100, overflow: { window_tokens: 5_000, sent_estimate: 4_000, server_requested_tokens: 6_000, server_limit_tokens: 5_000 } });
    expect(windowState(journal.events)).toEqual({ first: 3, learnedWindow: 5_000, calibration: 1.5, lastEstimate: null });
    journal.add({ type: "CONTEXT_WINDOW", iteration: 9, reason: "max_iterations", first_iteration: 5, dropped_from: 3, dropped_to: 4, limit: 4 });
    expect(windowState(journal.events)).toEqual({ first: 5, learnedWindow: 5_000, calibration: 1.5, lastEstimate: null });
  });

  it("ignores a server count no tokenizer could be that far from", () => {
    const journal = new Journal();
    journal.add({ type: "CONTEXT_WINDOW", iteration: 4, reason: "overflow", first_iteration: 3, dropped_from: 1, dropped_to: 2, limit: 100, overflow: { window_tokens: 3_000, sent_estimate: 4_000, server_requested_tokens: 1_250_025 } });
    expect(windowState(journal.events).calibration).toBe(1);
  });
});
