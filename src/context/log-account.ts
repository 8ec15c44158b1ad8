// The build's account for engine.log (and -v): each source's size, the conversation shown, a window move in the report's words, the request against the budget.
import type { JournalEvent, NewEvent } from "../journal/events.js";
import { foldIncrementally, type EventFold } from "../journal/fold.js";
import { describeWindowMove } from "../journal/window-move.js";
import { replyReserve, type ContextBudget } from "./budget.js";
import { MESSAGE_OVERHEAD_TOKENS } from "./context-meter.js";
import type { PartSize } from "./fit.js";
import type { ContextConfig } from "./schema.js";
import { describeSource, type SourceBlock } from "./sources.js";
import { estimateTokens } from "./token-counter.js";
import type { JournalWindow } from "./window-rule.js";

interface Account {
  /** Sizes are tokens (else bytes, shown as their estimate). */
  counted: boolean;
  calibration: number;
  counterName: string | null;
  modelWindow: number | null;
  budget: ContextBudget;
  estimatedTokens: number | null;
  event: NewEvent | null;
}

/** Sizes come from the fit's measures: nothing is measured again for the log. */
export function logAccount(log: (line: string) => void, config: ContextConfig, blocks: readonly (SourceBlock & { size: PartSize | null })[], window: JournalWindow, account: Account): void {
  const { counted, calibration } = account;
  const tokens = (raw: number): string => (counted ? `${Math.ceil(raw * calibration)} tokens` : `≈${estimateTokens(raw)} tokens`);
  for (const block of blocks) {
    const size = block.size ? `, ${tokens(counted ? block.size.tokens ?? block.size.bytes : block.size.bytes)}` : "";
    log(`context: ${describeSource(block.source, block.index)} ${block.where}${size}`);
  }
  for (const [index, source] of config.sources.entries()) {
    if (source.type !== "journal") continue;
    const dropped = window.first > 1 ? `; iterations before ${window.first} dropped` : "";
    log(`context: ${describeSource(source, index)} → ${window.messages.length} messages, ${tokens(window.rawTokens)}${dropped}`);
  }
  if (account.event?.type === "CONTEXT_WINDOW") log(`context: window moved: ${describeWindowMove(account.event)}`);
  if (counted && account.estimatedTokens !== null) {
    const room = account.modelWindow === null ? "" : ` of the ${account.modelWindow - replyReserve(account.budget.maxReplyTokens, account.modelWindow)} the window leaves`;
    log(`context: request ${Math.ceil(account.estimatedTokens * calibration)} tokens${room} (${account.counterName ?? "estimate"}, calibration ×${calibration.toFixed(2)})`);
  }
}

/** Characters the conversation's messages hold: all user messages', and each iteration's (its reply, calls and results). */
interface ConversationTally {
  user: number;
  /** By iteration number; iterations that never held a message stay 0. */
  byIteration: number[];
  total: number;
}

const conversationFold: EventFold<ConversationTally> = {
  initial: () => ({ user: 0, byIteration: [], total: 0 }),
  step(tally, event) {
    switch (event.type) {
      case "USER_MESSAGE":
        tally.user += event.content.length + MESSAGE_OVERHEAD_TOKENS;
        return tally;
      case "THOUGHT": {
        const calls = event.tool_calls.reduce((sum, call) => sum + call.arguments.length, 0);
        return addToIteration(tally, event.iteration, (event.content?.length ?? 0) + calls + MESSAGE_OVERHEAD_TOKENS);
      }
      case "ACTION_RESULT":
        return addToIteration(tally, event.iteration, event.observation_content.length + MESSAGE_OVERHEAD_TOKENS);
      case "ENGINE_START":
      case "LLM_ATTEMPT_FAILED":
      case "ACTION_REQUEST":
      case "HUMAN_INPUT_REQUEST":
      case "HUMAN_INPUT_RECEIVED":
      case "ERROR":
      case "CONTEXT_WINDOW":
      case "HOOK_RESULT":
      case "ENGINE_END":
        return tally;
      default: {
        const unknown: never = event;
        throw new Error(`conversation tally: unhandled event ${JSON.stringify(unknown)}`);
      }
    }
  },
};

function addToIteration(tally: ConversationTally, iteration: number, chars: number): ConversationTally {
  while (tally.byIteration.length <= iteration) tally.byIteration.push(0);
  tally.byIteration[iteration]! += chars;
  tally.total += chars;
  return tally;
}

/**
 * Characters of the conversation from `first` on (user messages, replies and their calls, results):
 * near enough its bytes for the log's estimate when nothing else measures the conversation, folded
 * incrementally so a long run's log costs no pass over the journal; a move of the window sums the
 * iterations on the shorter side of `first`.
 */
export function conversationChars(events: readonly JournalEvent[], first: number): number {
  const tally = foldIncrementally(conversationFold, events);
  const { byIteration } = tally;
  let shown = 0;
  if (first < byIteration.length - first) {
    shown = tally.total;
    for (let iteration = 0; iteration < first; iteration += 1) shown -= byIteration[iteration]!;
  } else {
    for (let iteration = Math.max(first, 0); iteration < byIteration.length; iteration += 1) shown += byIteration[iteration]!;
  }
  return tally.user + shown;
}
