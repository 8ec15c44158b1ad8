// The fit as a pure function: measured blocks, tools and conversation plus a budget give the window, its CONTEXT_WINDOW event, a request for a count or a read, or CONTEXT_OVERFLOW; no file, generator or tokenizer.
import { describe, expect, it } from "vitest";
import { fitContext, type Fit, type FitInput, type Measure, type PartSize } from "../../src/context/fit.js";
import type { JournalEntry, JournalSegment } from "../../src/context/journal-messages.js";
import type { WindowState } from "../../src/journal/window-state.js";
import { ContextOverflowError } from "../../src/errors.js";

const STATE: WindowState = { first: 1, learnedWindow: null, calibration: 1, lastEstimate: null };

/** Sizes the tests can reason about: a text of n characters is n bytes, ⌈n/3⌉ estimated, ⌈n/4⌉ tokens. */
function sizesOf(chars: number): Record<Measure, number> {
  return { bytes: chars, estimate: Math.ceil(chars / 3), tokens: Math.ceil(chars / 4) };
}

const entry = (content: string): JournalEntry => ({ message: { role: "user", content }, source: null });

/** The task, then `count` iterations of one message of `chars` characters each (iteration n's text starts with "n "). */
function segments(count: number, chars: number): JournalSegment[] {
  const all: JournalSegment[] = [{ kind: "user", entry: entry("task") }];
  for (let n = 1; n <= count; n += 1) all.push({ kind: "iteration", iteration: n, entries: [entry(`${n} `.padEnd(chars, "x"))] });
  return all;
}

interface Block {
  name: string;
  size: PartSize | null;
}

const part = (chars: number, counted = false): PartSize => ({ bytes: chars, estimate: Math.ceil(chars / 3), tokens: counted ? Math.ceil(chars / 4) : null });

function input(overrides: Partial<FitInput<Block>> & { count?: number; chars?: number } = {}): FitInput<Block> {
  const { count = 10, chars = 400, ...rest } = overrides;
  const counted = rest.counted ?? false;
  return {
    conversation: { segments: segments(count, chars), state: STATE, size: (item, measure) => sizesOf(item.message.content?.length ?? 0)[measure] },
    limits: { own: {}, modelWindow: null, maxReplyTokens: 100, overflow: null },
    iteration: count + 1,
    blocks: new Map([[1, [{ name: "prompt", size: part(200, counted) }]]]),
    blocksFollowWindow: false,
    tools: part(100, counted),
    counted,
    ...rest,
  };
}

function fitted(fit: Fit<Block>) {
  if (fit.kind !== "fitted") throw new Error(`expected a fitted window, got ${fit.kind}`);
  return fit;
}

/** The iterations a window shows, by the number each message starts with. */
const shown = (fit: Fit<Block>): number[] =>
  fitted(fit)
    .window.messages.map((message) => Number((message.content ?? "").split(" ")[0]))
    .filter((n) => !Number.isNaN(n));

describe("fitContext", () => {
  it("shows the whole conversation and measures nothing more while the bytes stay within the window", () => {
    const fit = fitted(fitContext(input({ limits: { own: {}, modelWindow: 100_000, maxReplyTokens: 100, overflow: null } })));
    expect(fit).toMatchObject({ measure: "bytes", event: null, estimatedTokens: null });
    expect(shown(fit)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(fit.blocks.map((block) => block.name)).toEqual(["prompt"]);
  });

  it("over max_iterations keeps the last half and gives the CONTEXT_WINDOW event, without counting a token", () => {
    const fit = fitted(fitContext(input({ limits: { own: { maxIterations: 4 }, modelWindow: null, maxReplyTokens: null, overflow: null } })));
    expect(shown(fit)).toEqual([9, 10]);
    expect(fit.measure).toBe("bytes");
    expect(fit.event).toEqual({ type: "CONTEXT_WINDOW", iteration: 11, reason: "max_iterations", first_iteration: 9, dropped_from: 1, dropped_to: 8, limit: 4 });
  });

  it("fits on the estimate, counting nothing, when bytes pass the journal's max_tokens but the estimate is far below it", () => {
    // 4,004 bytes pass 3,000; the estimate, 1,342, is under the half of it trusted without a provider's count.
    const fit = fitted(fitContext(input({ limits: { own: { maxTokens: 3_000 }, modelWindow: null, maxReplyTokens: null, overflow: null } })));
    expect(fit).toMatchObject({ measure: "estimate", event: null });
    expect(shown(fit)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // What the THOUGHT records so that the provider's count calibrates the next estimate: the prompt, the tools, the conversation, the reply's opening.
    expect(fit.estimatedTokens).toBe(67 + 34 + 2 + 10 * 134 + 3);
  });

  it("moves the window on the estimate past the journal's max_tokens, leaving about half of it", () => {
    // The previous request: 2,000 estimated, 1,500 by the provider. Trusted up to 90% of 900 tokens: 1,080 estimated, which 1,342 pass.
    const state: WindowState = { ...STATE, lastEstimate: { estimated: 2_000, reported: 1_500 } };
    const base = input();
    const fit = fitted(fitContext({ ...base, conversation: { ...base.conversation, state }, limits: { own: { maxTokens: 900 }, modelWindow: null, maxReplyTokens: null, overflow: null } }));
    expect(fit.measure).toBe("estimate");
    expect(shown(fit)).toEqual([7, 8, 9, 10]);
    // No token sizes: nothing was counted; the limit is the share of max_tokens the estimate is trusted with.
    expect(fit.event).toEqual({ type: "CONTEXT_WINDOW", iteration: 11, reason: "max_tokens", first_iteration: 7, dropped_from: 1, dropped_to: 6, limit: 810 });
    // The conversation left, in the provider's tokens (×0.75): a little under half of max_tokens.
    const left = fit.window.rawTokens * 0.75;
    expect(left).toBeLessThanOrEqual(900 / 2);
    expect(left).toBeGreaterThan(900 / 3);
  });

  it("asks for a count when even the smallest window the estimate allows is near the journal's max_tokens, and with tokens keeps it whole", () => {
    // Two iterations of 1,800 bytes: 600 estimated each, so the last alone passes the 500 trusted of 1,000; the tokenizer finds 901 in all.
    const limits = { own: { maxTokens: 1_000 }, modelWindow: null, maxReplyTokens: null, overflow: null };
    expect(fitContext(input({ limits, count: 2, chars: 1_800 }))).toEqual({ kind: "count" });
    const fit = fitted(fitContext(input({ limits, count: 2, chars: 1_800, counted: true })));
    expect(fit).toMatchObject({ measure: "tokens", event: null });
    expect(shown(fit)).toEqual([1, 2]);
  });

  it("after a move on the journal's max_tokens by the estimate, fits the model's window by the estimate too", () => {
    const state: WindowState = { ...STATE, lastEstimate: { estimated: 2_000, reported: 1_500 } };
    const base = input();
    const within = (modelWindow: number) => fitContext({ ...base, conversation: { ...base.conversation, state }, limits: { own: { maxTokens: 900 }, modelWindow, maxReplyTokens: 100, overflow: null } });
    // 700 − 100 leaves 600: trusted up to 720 estimated; the 4 iterations max_tokens left and the other parts (104) take 642.
    const roomy = fitted(within(700));
    expect(roomy).toMatchObject({ measure: "estimate", event: { reason: "max_tokens", first_iteration: 7 }, estimatedTokens: 642 });
    // 500 − 100 leaves 400: trusted up to 480; the window moves on from where max_tokens left it, still by the estimate.
    const tight = fitted(within(500));
    expect(shown(tight)).toEqual([10]);
    expect(tight).toMatchObject({ measure: "estimate", estimatedTokens: 104 + 2 + 134 });
    expect(tight.event).toEqual({ type: "CONTEXT_WINDOW", iteration: 11, reason: "context_window", first_iteration: 10, dropped_from: 1, dropped_to: 9, limit: 282 });
  });

  it("with tokens counted, moves the window on the journal's max_tokens and records its sizes", () => {
    const limits = { own: { maxTokens: 600 }, modelWindow: null, maxReplyTokens: null, overflow: null };
    const fit = fitted(fitContext(input({ limits, counted: true })));
    // 10 iterations of 100 tokens and the task's 1 pass 600; half of the 599 left is 299: the last two iterations.
    expect(shown(fit)).toEqual([9, 10]);
    expect(fit.event).toEqual({ type: "CONTEXT_WINDOW", iteration: 11, reason: "max_tokens", first_iteration: 9, dropped_from: 1, dropped_to: 8, limit: 600, tokens_before: 1_001, tokens_after: 201 });
    // Counted: the prompt's 50 tokens, the tools' 25, the conversation's 201 and the reply's opening 3.
    expect(fit).toMatchObject({ measure: "tokens", estimatedTokens: 50 + 25 + 201 + 3 });
  });

  it("sizes the request by the estimate when it stays far from the model's window", () => {
    // 4,300 bytes do not fit in 4,000 − 100; the estimate (about 1,440) is under half of that.
    const fit = fitted(fitContext(input({ limits: { own: {}, modelWindow: 4_000, maxReplyTokens: 100, overflow: null } })));
    expect(fit).toMatchObject({ measure: "estimate", event: null });
    expect(fit.estimatedTokens).toBe(67 + 34 + 2 + 10 * 134 + 3);
  });

  it("moves the window to what the model's window leaves once the other parts are counted", () => {
    const fit = fitted(fitContext(input({ counted: true, limits: { own: {}, modelWindow: 700, maxReplyTokens: 100, overflow: null } })));
    // 600 left, less the prompt, the tools and the reply's opening (78): 522 for the conversation; half of 521 after the task: two iterations.
    expect(shown(fit)).toEqual([9, 10]);
    expect(fit.event).toMatchObject({ reason: "context_window", first_iteration: 9, limit: 522 });
    expect(fit.estimatedTokens).toBe(50 + 25 + 201 + 3);
  });

  it("fails with CONTEXT_OVERFLOW when the user messages and the last iteration alone do not fit", () => {
    const fit = () => fitContext(input({ counted: true, chars: 4_000, limits: { own: {}, modelWindow: 1_000, maxReplyTokens: 100, overflow: null } }));
    expect(fit).toThrow(ContextOverflowError);
    expect(fit).toThrow(/needs 1079 tokens — the other sources and the tool definitions 78, the user messages and the last iteration 1001 — but the model's window, 1000 tokens, leaves 900 once 100 are kept for the reply/);
  });

  it("after an overflow, moves on the window it learned and records what the server said", () => {
    const overflow = { window_tokens: 700, sent_estimate: 1_100 };
    const fit = fitted(fitContext(input({ counted: true, limits: { own: {}, modelWindow: 700, maxReplyTokens: 100, overflow } })));
    expect(fit.event).toMatchObject({ reason: "overflow", first_iteration: 9, overflow });
  });

  it("asks for the sources read again for a moved window when a generator depends on it, and sends what they then hold", () => {
    const limits = { own: {}, modelWindow: 700, maxReplyTokens: 100, overflow: null };
    const first: FitInput<Block> = input({ counted: true, limits, blocksFollowWindow: true });
    expect(fitContext(first)).toEqual({ kind: "read", first: 9 });
    const summary = { name: "summary of 1–8", size: part(40, true) };
    const fit = fitted(fitContext({ ...first, blocks: new Map([...first.blocks, [9, [summary]]]) }));
    expect(fit.blocks).toEqual([summary]);
    expect(shown(fit)).toEqual([9, 10]);
    expect(fit.estimatedTokens).toBe(10 + 25 + 201 + 3);
  });
});
