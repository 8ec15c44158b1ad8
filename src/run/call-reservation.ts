// What one model call may cost at most, reserved before it is sent: its prompt, estimated on the safe side, and the longest reply it may get, priced.
import type { LlmRequest } from "../conversation.js";
import { modelFamily } from "../context/model-windows.js";
import type { Pricing } from "../journal/events.js";
import { worstCaseCost } from "../journal/usage-totals.js";
import { requestedReplyTokens } from "../llm/reply-tokens.js";
import type { LlmConfig } from "../llm/settings-schema.js";
import type { ProviderName } from "../llm/types.js";

/** Two bytes a token: more than any tokenizer gives English, code or JSON, and about what CJK text takes. */
const BYTES_PER_TOKEN = 2;
/** What a provider adds around the messages and tools it is sent (roles, a tool-use system prompt). */
const FRAMING_TOKENS = 1024;
/** The reply's room when neither llm.max_tokens nor the model's output limit is known. */
const UNKNOWN_REPLY_TOKENS = 4096;

/** Where the reply's room comes from, said once per process so that a reservation is never a silent guess. */
interface ReplyRoom {
  tokens: number;
  /** llm.max_tokens, the protocol's own default, the model's output limit, or the fallback. */
  source: "llm.max_tokens" | "the protocol's max_tokens" | "the model's output limit" | "unknown";
}

/** The longest reply a request may get: llm.max_tokens (or what the protocol always sends), else the model's published output limit, else 4096. */
export function replyRoom(llm: LlmConfig, protocol: ProviderName, model: string): ReplyRoom {
  const requested = requestedReplyTokens(protocol, llm.max_tokens, llm.thinking?.budget_tokens);
  if (requested !== null) return { tokens: requested, source: llm.max_tokens !== undefined ? "llm.max_tokens" : "the protocol's max_tokens" };
  const limit = modelFamily(model).outputLimit;
  if (limit !== null) return { tokens: limit, source: "the model's output limit" };
  return { tokens: UNKNOWN_REPLY_TOKENS, source: "unknown" };
}

/** The prompt's tokens, estimated from its bytes on the safe side (two a token), with the provider's framing. */
export function promptTokenBound(request: LlmRequest): number {
  const bytes = Buffer.byteLength(JSON.stringify(request.messages)) + Buffer.byteLength(JSON.stringify(request.tools)) + Buffer.byteLength(JSON.stringify(request.output_format ?? null));
  return Math.ceil(bytes / BYTES_PER_TOKEN) + FRAMING_TOKENS;
}

/** The worst case of one call: its tokens, and their price when a price is known. */
export interface CallWorstCase {
  tokens: number;
  usd: number | null;
}

export function callWorstCase(request: LlmRequest, room: ReplyRoom, pricing: Pricing | undefined): CallWorstCase {
  const input = promptTokenBound(request);
  return { tokens: input + room.tokens, usd: pricing ? worstCaseCost(input, room.tokens, pricing) : null };
}

/** The line that says how the reply's room was chosen, when it was not llm.max_tokens. */
export function replyRoomNote(room: ReplyRoom, model: string): string | null {
  switch (room.source) {
    case "llm.max_tokens":
    case "the protocol's max_tokens":
      return null;
    case "the model's output limit":
      return `[budget] llm.max_tokens is not set: each model call reserves ${model}'s output limit, ${room.tokens} reply tokens; set llm.max_tokens to reserve less`;
    case "unknown":
      return `[budget] llm.max_tokens is not set and ${model}'s output limit is unknown: each model call reserves ${room.tokens} reply tokens, and a longer reply would cost more than was reserved; set llm.max_tokens`;
  }
}
