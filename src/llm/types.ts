// The Provider interface the engine calls (every wire protocol gets one from createProvider, a replay is one too), and the names agent.yaml chooses protocols by.
import type { LlmReply, LlmRequest } from "../conversation.js";
import type { AttemptFailure } from "./failure.js";

/** llm.provider / DELTA_PROVIDER: Chat Completions (any OpenAI-compatible server), Anthropic Messages, OpenAI Responses. */
export const PROVIDER_NAMES = ["openai", "anthropic", "openai-responses"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface CallOptions {
  signal?: AbortSignal;
  /** Called for every attempt that failed, the last one included, before any wait: so the caller can journal and log it. */
  onFailedAttempt?: (attempt: FailedAttempt) => void;
  /** Text of the reply as a streamed reply delivers it, piece by piece (never called for a whole reply). */
  onText?: (text: string) => void;
}

export interface FailedAttempt {
  /** 1-based number of the attempt within this call. */
  attempt: number;
  /** Epoch ms when the attempt was sent. */
  startedAt: number;
  durationMs: number;
  failure: AttemptFailure;
  /** How the failure reads in a message (describeFailure). */
  reason: string;
  /** The wait before the next attempt; null when no attempt follows. */
  retryInMs: number | null;
}

export interface Provider {
  readonly name: string;
  complete(request: LlmRequest, options?: CallOptions): Promise<LlmReply>;
}
