// The fit: which iterations a request shows beside its other parts, a pure function of sizes measured once and the budget — the window, its CONTEXT_WINDOW event, or CONTEXT_OVERFLOW.
import { ContextOverflowError, type ContextOverflow } from "../errors.js";
import type { EventOf, NewEvent } from "../journal/events.js";
import { replyReserve, type ContextBudget } from "./budget.js";
import type { JournalEntry, JournalSegment } from "./journal-messages.js";
import { estimateRoom, estimateScale } from "./request-estimate.js";
import { trustedRatio, type WindowState } from "../journal/window-state.js";
import { windowEvent, windowJournal, type JournalBudget, type JournalWindow } from "./window-rule.js";

/**
 * How a size is taken: bytes (an upper bound of any BPE count: every token is at least one byte),
 * the three-bytes-a-token estimate (request-estimate.ts), or the model's tokenizer.
 */
export type Measure = "bytes" | "estimate" | "tokens";

/** A part of the request beside the conversation (a source's message, the tool definitions): bytes and their estimate when read, tokens once counted. */
export interface PartSize {
  bytes: number;
  estimate: number;
  tokens: number | null;
}

/** The journal's conversation as the fit sees it. */
export interface FitConversation {
  /** From the first iteration the window state shows: user messages and whole iterations. */
  segments: readonly JournalSegment[];
  state: WindowState;
  /** A message's size by `measure`; "tokens" is asked for only once the input says `counted`. */
  size: (entry: JournalEntry, measure: Measure) => number;
}

type OverflowRecord = NonNullable<EventOf<"CONTEXT_WINDOW">["overflow"]>;

interface FitLimits {
  /** The journal sources' own limits. */
  own: JournalBudget;
  /** The window requests keep within; null when none is known or no journal source could be cut to fit it. */
  modelWindow: number | null;
  /** The max_tokens requests carry (budget.ts), or null. */
  maxReplyTokens: number | null;
  /** Set on the retry after an overflow: what the CONTEXT_WINDOW event records. */
  overflow: OverflowRecord | null;
}

export interface FitInput<B extends { size: PartSize | null }> {
  conversation: FitConversation;
  limits: FitLimits;
  /** The iteration the request is for: the CONTEXT_WINDOW event's. */
  iteration: number;
  /** The other sources' blocks (size null: adds nothing), as read for each first iteration so far. */
  blocks: ReadonlyMap<number, readonly B[]>;
  /** The blocks depend on the first iteration shown (a computed_file source); otherwise any one read serves. */
  blocksFollowWindow: boolean;
  tools: PartSize;
  /** The tokenizer is loaded and every part read so far has its tokens. */
  counted: boolean;
}

export type Fit<B> =
  | {
      kind: "fitted";
      window: JournalWindow;
      /** The blocks the request carries: those read for `window.first` when they follow the window. */
      blocks: readonly B[];
      /** The CONTEXT_WINDOW event to journal before sending, when the window moved. */
      event: NewEvent | null;
      /** The request's size before calibration (messages, tools, the reply's opening), or null when measured in bytes only. */
      estimatedTokens: number | null;
      measure: Measure;
    }
  /** The blocks are needed as read for this first iteration: read them and fit again. */
  | { kind: "read"; first: number }
  /** Only the tokenizer can tell: count every part and fit again. */
  | { kind: "count" };

/** Tokens every chat prompt costs beside its messages (the reply's opening), as OpenAI counts them. */
export const REPLY_PRIMING = 3;

/**
 * The journal's own limits first (max_iterations, max_tokens), then what the model's window leaves
 * once the other sources, the tools and the reply are counted. Bytes decide while no token limit
 * could be passed; then the estimate, while it stays far enough from the limit (request-estimate.ts),
 * the window moving on it when it must; nearer, the tokenizer (`count`). When even the user
 * messages and the last iteration do not fit, it throws CONTEXT_OVERFLOW.
 */
export function fitContext<B extends { size: PartSize | null }>(input: FitInput<B>): Fit<B> {
  const { conversation, limits, counted } = input;
  const { own, modelWindow, overflow } = limits;
  const { state } = conversation;
  const blocksFor = (first: number): readonly B[] | undefined => (input.blocksFollowWindow ? input.blocks.get(first) : input.blocks.values().next().value);

  // The journal under its own limits: once counted, in tokens; else in bytes, or past max_tokens by the estimate while it is far from the limit.
  const mine = counted ? { window: journalWindow(conversation, own, "tokens"), measure: "tokens" as const } : ownWindow(conversation, own);
  if (mine === null) return { kind: "count" };
  const { window } = mine;
  const blocks = blocksFor(window.first);
  if (blocks === undefined) return { kind: "read", first: window.first };
  const fitted = (measure: Measure, chosen: JournalWindow, shown: readonly B[], estimatedTokens: number | null): Fit<B> => ({
    kind: "fitted",
    window: chosen,
    blocks: shown,
    event: chosen.move === null ? null : windowEvent(input.iteration, chosen.move, measure === "tokens" ? state.calibration : null, overflow ?? undefined),
    estimatedTokens,
    measure,
  });
  const requestTokens = (shown: readonly B[], chosen: JournalWindow): number => partsSize(shown, input.tools, "tokens") + chosen.rawTokens + REPLY_PRIMING;
  if (modelWindow === null) {
    if (mine.measure === "tokens") return fitted("tokens", window, blocks, requestTokens(blocks, window));
    return mine.measure === "estimate" ? fitted("estimate", window, blocks, partsSize(blocks, input.tools, "estimate") + REPLY_PRIMING + window.rawTokens) : fitted("bytes", window, blocks, null);
  }

  const room = modelWindow - replyReserve(limits.maxReplyTokens, modelWindow);
  if (!counted) {
    if (mine.measure === "bytes" && (partsSize(blocks, input.tools, "bytes") + window.rawTokens + REPLY_PRIMING) * state.calibration <= room) return fitted("bytes", window, blocks, null);
    // The bytes could pass the window (or max_tokens already took the estimate): an estimate will do while it is far from the limit; nearer, the tokenizer counts.
    const guess = estimateFit(input, blocks, room, mine.measure === "estimate" ? window : journalWindow(conversation, own, "estimate"));
    if (guess.kind !== "fitted") return guess;
    return fitted("estimate", guess.window, guess.blocks, guess.tokens);
  }
  const others = (shown: readonly B[]): number => (partsSize(shown, input.tools, "tokens") + REPLY_PRIMING) * state.calibration;
  const chosen = journalWindow(conversation, { ...own, windowTokens: room - others(blocks), ...(overflow ? { overflow: true } : {}) }, "tokens");
  const shown = blocksFor(chosen.first);
  if (shown === undefined) return { kind: "read", first: chosen.first };
  const minimum = others(shown) + chosen.rawMinimum * state.calibration;
  if (minimum > room || (overflow && chosen.move === null)) throw tooLong(limits, modelWindow, minimum, others(shown), chosen.rawMinimum * state.calibration, overflow !== null);
  return fitted("tokens", chosen, shown, requestTokens(shown, chosen));
}

function journalWindow(conversation: FitConversation, budget: JournalBudget, measure: Measure, state: WindowState = conversation.state): JournalWindow {
  return windowJournal(conversation.segments, budget, (entry) => conversation.size(entry, measure), state);
}

/**
 * The journal under its own limits without a tokenizer: in bytes while they pass no max_tokens;
 * past it, by the estimate scaled by the provider's count of the previous request, trusted while
 * far enough below max_tokens (request-estimate.ts), the window moving on it when it must, as it
 * does for the model's window (estimateFit). Null when only a tokenizer's count can tell.
 */
function ownWindow(conversation: FitConversation, own: JournalBudget): { window: JournalWindow; measure: "bytes" | "estimate" } | null {
  const bytes = journalWindow(conversation, own, "bytes");
  if (own.maxTokens === undefined || bytes.move?.reason !== "max_tokens") return { window: bytes, measure: "bytes" };
  const { lastEstimate } = conversation.state;
  const limit = estimateRoom(own.maxTokens, lastEstimate);
  // Limits in the provider's tokens, counts in estimated ones: the scale is the calibration between them.
  const scale = estimateScale(lastEstimate);
  const window = journalWindow(conversation, { ...own, maxTokens: limit * scale }, "estimate", { ...conversation.state, calibration: scale });
  return window.rawTokens <= limit ? { window, measure: "estimate" } : null;
}

/**
 * The window sized by the three-bytes-a-token estimate, scaled by the provider's count of the
 * previous request, when that keeps the request far enough below `room` (request-estimate.ts);
 * `window` is the journal under its own limits by the estimate; it moves further when it must
 * (a move for the model's window keeps fewer iterations than any own limit's it follows).
 * `count` when only a tokenizer's count can tell: then even the smallest window the estimate
 * allows is too near the limit.
 */
function estimateFit<B extends { size: PartSize | null }>(
  input: FitInput<B>,
  blocks: readonly B[],
  room: number,
  window: JournalWindow,
): { kind: "fitted"; window: JournalWindow; blocks: readonly B[]; tokens: number } | { kind: "read"; first: number } | { kind: "count" } {
  const { conversation, limits } = input;
  const { state } = conversation;
  const others = (shown: readonly B[]): number => partsSize(shown, input.tools, "estimate") + REPLY_PRIMING;
  const limit = estimateRoom(room, state.lastEstimate);
  if (others(blocks) + window.rawTokens <= limit) return { kind: "fitted", window, blocks, tokens: others(blocks) + window.rawTokens };
  // Limits in the provider's tokens, counts in estimated ones: the scale is the calibration between them.
  const scale = estimateScale(state.lastEstimate);
  const moved = journalWindow(conversation, { ...limits.own, windowTokens: (limit - others(blocks)) * scale }, "estimate", { ...state, calibration: scale });
  const shown = input.blocksFollowWindow ? input.blocks.get(moved.first) : blocks;
  if (shown === undefined) return { kind: "read", first: moved.first };
  const tokens = others(shown) + moved.rawTokens;
  return tokens <= limit ? { kind: "fitted", window: moved, blocks: shown, tokens } : { kind: "count" };
}

/** The blocks' and the tools' size by `measure`: for tokens, what the caller counted. */
function partsSize(blocks: readonly { size: PartSize | null }[], tools: PartSize, measure: Measure): number {
  let size = sizeBy(tools, measure);
  for (const block of blocks) if (block.size) size += sizeBy(block.size, measure);
  return size;
}

function sizeBy(part: PartSize, measure: Measure): number {
  if (measure !== "tokens") return part[measure];
  if (part.tokens === null) throw new Error("fit: tokens asked of a part that was never counted");
  return part.tokens;
}

function tooLong(limits: FitLimits, modelWindow: number, minimum: number, others: number, lastIteration: number, learned: boolean): ContextOverflowError {
  const need = Math.ceil(minimum);
  const reserve = replyReserve(limits.maxReplyTokens, modelWindow);
  const which = learned ? "the window the server's refusal leaves" : "the model's window";
  return new ContextOverflowError(
    `The smallest context this run can send needs ${need} tokens — the other sources and the tool definitions ${Math.ceil(others)}, ` +
      `the user messages and the last iteration ${Math.ceil(lastIteration)} — but ${which}, ${modelWindow} tokens, ` +
      `leaves ${Math.max(0, modelWindow - reserve)} once ${reserve} are kept for the reply. ` +
      "Shorten the context files or the task, lower llm.max_tokens, or set llm.context_window in agent.yaml if the model accepts more; then `delta continue`.",
    { limitTokens: modelWindow, requestedTokens: need + reserve },
  );
}

/** Without trusted sizes from the server, an overflow teaches the run a window of this share of what it sent. */
const OVERFLOW_SHRINK = 0.9;

interface WindowFacts {
  state: WindowState;
  /** The window requests keep within: the configured or known one, or what an overflow taught the run. */
  window: number | null;
  overflow: OverflowRecord | null;
}

/**
 * The journal's window state (`state`), and on an overflow what the server taught: its count of our request
 * calibrates ours when it is believable, its window is believed when its count was, and
 * otherwise the run keeps to OVERFLOW_SHRINK of what it sent (`sentEstimate`: what the engine
 * counted of the refused prompt, before calibration).
 */
export function windowFacts(state: WindowState, budget: ContextBudget, refused: { sizes: ContextOverflow; sentEstimate: number } | null): WindowFacts {
  const known = smallestOf(budget.contextWindow, state.learnedWindow);
  if (!refused) return { state, window: known, overflow: null };
  const { sizes, sentEstimate } = refused;
  const trusted = sizes.requestedTokens === undefined ? null : trustedRatio(sizes.requestedTokens, sentEstimate);
  const calibration = trusted ?? state.calibration;
  // A server checks the prompt and the reply's max_tokens together against its window.
  const sent = Math.ceil(sentEstimate * calibration) + (budget.maxReplyTokens ?? 0);
  const serverWindow = trusted !== null && sizes.limitTokens !== undefined && sizes.limitTokens < sent ? sizes.limitTokens : null;
  const learned = Math.max(1, Math.min(serverWindow ?? Math.floor(sent * OVERFLOW_SHRINK), known ?? Number.POSITIVE_INFINITY));
  return {
    state: { ...state, calibration, learnedWindow: learned },
    window: learned,
    overflow: {
      window_tokens: learned,
      sent_estimate: sentEstimate,
      ...(sizes.limitTokens !== undefined ? { server_limit_tokens: sizes.limitTokens } : {}),
      ...(sizes.requestedTokens !== undefined ? { server_requested_tokens: sizes.requestedTokens } : {}),
    },
  };
}

function smallestOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}
