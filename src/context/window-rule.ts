// The windowing rule: which iterations the context shows, a pure function of the journal's events and the budget.
//
// 1. The journal is cut only between iterations (a THOUGHT with all its results is one block); user
//    messages are always kept; nothing is reordered.
// 2. The first iteration shown moves only forward, and only when the shown part passes a limit
//    (max_iterations, max_tokens, what the model's window leaves, a server's overflow); it then jumps
//    so that half the limit is left, so between jumps each request starts with the previous one, byte for byte.
// 3. Every jump is journaled (CONTEXT_WINDOW) and the next build starts from the last one.
import type { EventOf, NewEvent, WindowReason } from "../journal/events.js";
import { segmentConversation, type JournalConversation, type JournalEntry, type JournalSegment } from "./journal-messages.js";
import type { WindowState } from "../journal/window-state.js";

/** One iteration's share of the context: its number and its tokens. */
export interface Block {
  iteration: number;
  tokens: number;
}

interface WindowLimit {
  reason: WindowReason;
  /** Iterations for max_iterations; for the others, tokens the journal may take, user messages included. */
  limit: number;
}

interface WindowMove {
  reason: WindowReason;
  limit: number;
  /** Index of the first kept block before and after the move. */
  from: number;
  to: number;
}

/**
 * Applies each limit in turn to `blocks` (the iterations shown so far, oldest first) and returns
 * the index of the first block kept, with the last move made (null when every limit holds).
 * Over an iteration limit N, the last ⌈N/2⌉ iterations are kept; over a token limit, the longest
 * run of last iterations that takes at most half of what the limit leaves beside the user
 * messages. The last iteration is always kept: the model must see the result it asked for.
 */
export function applyLimits(blocks: readonly Block[], fixedTokens: number, limits: readonly WindowLimit[]): { start: number; move: WindowMove | null } {
  let start = 0;
  let move: WindowMove | null = null;
  if (blocks.length === 0) return { start, move };
  const initial = start;
  const last = blocks.length - 1;
  for (const { reason, limit } of limits) {
    let next = start;
    if (reason === "max_iterations") {
      if (blocks.length - start > limit) next = Math.max(start, blocks.length - Math.ceil(limit / 2));
    } else if (fixedTokens + tokensFrom(blocks, start) > limit) {
      const room = (limit - fixedTokens) / 2;
      next = last;
      let kept = blocks[last]!.tokens;
      while (next > start && kept + blocks[next - 1]!.tokens <= room) {
        next -= 1;
        kept += blocks[next]!.tokens;
      }
    }
    next = Math.min(next, last);
    if (next > start) {
      move = { reason, limit, from: initial, to: next };
      start = next;
    }
  }
  return { start, move };
}

function tokensFrom(blocks: readonly Block[], start: number): number {
  let sum = 0;
  for (let index = start; index < blocks.length; index += 1) sum += blocks[index]!.tokens;
  return sum;
}

export interface JournalBudget {
  maxIterations?: number;
  /** The journal source's max_tokens. */
  maxTokens?: number;
  /** Tokens the model's window leaves the journal once the other sources, the tools and the reply are counted. */
  windowTokens?: number;
  /** The window came from a server's overflow just now: a move it forces is journaled as `overflow`. */
  overflow?: boolean;
}

export interface JournalWindow extends JournalConversation {
  /** The first iteration shown (the state's first when no iteration is recorded yet). */
  first: number;
  /** Tokens of the journal's messages as sent, before calibration (0 when nothing is counted). */
  rawTokens: number;
  /** Tokens (before calibration) of the user messages and of the last iteration: what no window can drop. */
  rawMinimum: number;
  /** The move this build made, to be journaled before the request, or null. */
  move: (WindowMove & { firstIteration: number; droppedFrom: number; droppedTo: number; rawBefore: number; rawAfter: number }) | null;
}

/**
 * The conversation the journal source shows under `budget` (limits in calibrated tokens), from
 * the journal's segments since the state's first iteration (one build walks the journal once and
 * windows the same segments under several limits). `rawTokens` counts one message before
 * calibration; it may return an upper bound (its bytes) to learn without a tokenizer that no
 * token limit can be passed.
 */
export function windowJournal(segments: readonly JournalSegment[], budget: JournalBudget, rawTokens: (entry: JournalEntry) => number, state: WindowState): JournalWindow {
  const blocks: Block[] = [];
  let fixedTokens = 0;
  for (const segment of segments) {
    if (segment.kind === "user") fixedTokens += rawTokens(segment.entry);
    else blocks.push({ iteration: segment.iteration, tokens: segment.entries.reduce((sum, entry) => sum + rawTokens(entry), 0) });
  }
  // Limits are compared with raw counts: dividing the limit once equals calibrating every count.
  const limits = limitsOf(budget).map((limit) => (limit.reason === "max_iterations" ? limit : { ...limit, limit: limit.limit / state.calibration }));
  const { start, move } = applyLimits(blocks, fixedTokens, limits);
  const first = blocks[start]?.iteration ?? state.first;
  const kept = start === 0 ? segments : segments.filter((segment) => segment.kind === "user" || segment.iteration >= first);
  const raw = fixedTokens + tokensFrom(blocks, start);
  return {
    ...segmentConversation(kept),
    first,
    rawTokens: raw,
    rawMinimum: fixedTokens + (blocks.at(-1)?.tokens ?? 0),
    move: move === null ? null : {
      ...move,
      limit: move.reason === "max_iterations" ? move.limit : move.limit * state.calibration,
      firstIteration: first,
      droppedFrom: blocks[move.from]!.iteration,
      droppedTo: blocks[move.to - 1]!.iteration,
      rawBefore: fixedTokens + tokensFrom(blocks, move.from),
      rawAfter: raw,
    },
  };
}

function limitsOf(budget: JournalBudget): WindowLimit[] {
  const limits: WindowLimit[] = [];
  if (budget.maxIterations !== undefined) limits.push({ reason: "max_iterations", limit: budget.maxIterations });
  if (budget.maxTokens !== undefined) limits.push({ reason: "max_tokens", limit: budget.maxTokens });
  if (budget.windowTokens !== undefined) limits.push({ reason: budget.overflow ? "overflow" : "context_window", limit: Math.max(0, budget.windowTokens) });
  return limits;
}

/**
 * The CONTEXT_WINDOW event that records a move before the request of `iteration`; `calibration`
 * is null when the move was made without counting tokens (an iteration limit under every token limit).
 */
export function windowEvent(iteration: number, move: NonNullable<JournalWindow["move"]>, calibration: number | null, overflow?: NonNullable<EventOf<"CONTEXT_WINDOW">["overflow"]>): NewEvent {
  return {
    type: "CONTEXT_WINDOW",
    iteration,
    reason: move.reason,
    first_iteration: move.firstIteration,
    dropped_from: move.droppedFrom,
    dropped_to: move.droppedTo,
    limit: Math.floor(move.limit),
    ...(calibration !== null ? { tokens_before: Math.ceil(move.rawBefore * calibration), tokens_after: Math.ceil(move.rawAfter * calibration) } : {}),
    ...(overflow ? { overflow } : {}),
  };
}
