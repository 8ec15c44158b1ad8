// The reply's room a request asks the server for (its max_tokens), which the server counts against the window with the prompt.
import type { ProviderName } from "./types.js";

/** max_tokens is required by the Messages API; this when llm.max_tokens is not set (plus the thinking budget when thinking is on). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

/** The max_tokens every Anthropic request carries. */
export function anthropicMaxTokens(maxTokens: number | undefined, thinkingBudget: number | undefined): number {
  return maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS + (thinkingBudget ?? 0);
}

/** llm.max_tokens when set; else what the protocol sends on its own, or null when the request names no limit and the server chooses. */
export function requestedReplyTokens(protocol: ProviderName, maxTokens: number | undefined, thinkingBudget: number | undefined): number | null {
  return protocol === "anthropic" ? anthropicMaxTokens(maxTokens, thinkingBudget) : (maxTokens ?? null);
}
