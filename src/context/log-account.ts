// The build's account for engine.log (and -v): each source's size, the conversation shown, a window move in the report's words, the request against the budget.
import type { JournalEvent, NewEvent } from "../journal/events.js";
import { describeWindowMove } from "../journal/window-move.js";
import { counted as withNoun } from "../plural.js";
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
    log(`context: ${describeSource(source, index)} → ${withNoun(window.messages.length, "message")}, ${tokens(window.rawTokens)}${dropped}`);
  }
  if (account.event?.type === "CONTEXT_WINDOW") log(`context: window moved: ${describeWindowMove(account.event)}`);
  if (counted && account.estimatedTokens !== null) {
    const room = account.modelWindow === null ? "" : ` of the ${account.modelWindow - replyReserve(account.budget.maxReplyTokens, account.modelWindow)} the window leaves`;
    log(`context: request ${Math.ceil(account.estimatedTokens * calibration)} tokens${room} (${account.counterName ?? "estimate"}, calibration ×${calibration.toFixed(2)})`);
  }
}

/**
 * Characters of the conversation from `first` on (user messages, replies and their calls, results), each message with
 * its overhead: near enough its bytes for the log's estimate when nothing else measures the conversation. `events` are
 * those a request can still show (journal/shown-journal.ts), so this costs a pass over the window, not the run; and the
 * reader keeps them in one array that only grows, so each build sums only what was added since the last.
 */
export function conversationChars(events: readonly JournalEvent[], first: number): number {
  const known = summedChars.get(events);
  const from = known !== undefined && known.first === first && known.upTo <= events.length ? known : { first, upTo: 0, chars: 0 };
  let chars = from.chars;
  for (let index = from.upTo; index < events.length; index += 1) chars += eventChars(events[index]!, first);
  summedChars.set(events, { first, upTo: events.length, chars });
  return chars;
}

const summedChars = new WeakMap<readonly JournalEvent[], { first: number; upTo: number; chars: number }>();

function eventChars(event: JournalEvent, first: number): number {
  switch (event.type) {
    case "USER_MESSAGE":
      return event.content.length + MESSAGE_OVERHEAD_TOKENS;
    case "THOUGHT":
      return event.iteration >= first ? (event.content?.length ?? 0) + event.tool_calls.reduce((sum, call) => sum + call.arguments.length, 0) + MESSAGE_OVERHEAD_TOKENS : 0;
    case "ACTION_RESULT":
      return event.iteration >= first ? event.observation_content.length + MESSAGE_OVERHEAD_TOKENS : 0;
    case "ENGINE_START":
    case "LLM_ATTEMPT_FAILED":
    case "ACTION_REQUEST":
    case "HUMAN_INPUT_REQUEST":
    case "HUMAN_INPUT_RECEIVED":
    case "ERROR":
    case "CONTEXT_WINDOW":
    case "HOOK_RESULT":
    case "REPLAY_DIVERGED":
    case "MODEL_QUEUED":
    case "MODEL_SUBMITTED":
    case "ENGINE_END":
      return 0;
    default: {
      const unknown: never = event;
      throw new Error(`conversation characters: unhandled event ${JSON.stringify(unknown)}`);
    }
  }
}
