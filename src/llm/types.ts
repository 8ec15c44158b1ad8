// The Provider interface every wire protocol implements, and the names agent.yaml chooses them by.
import type { LlmReply, LlmRequest } from "../conversation.js";

/** llm.provider / DELTA_PROVIDER: Chat Completions (any OpenAI-compatible server), Anthropic Messages, OpenAI Responses. */
export const PROVIDER_NAMES = ["openai", "anthropic", "openai-responses"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface CallOptions {
  signal?: AbortSignal;
  /** Called before each retry so the caller can log it. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export interface Provider {
  readonly name: string;
  complete(request: LlmRequest, options?: CallOptions): Promise<LlmReply>;
}
