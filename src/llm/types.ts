// The Provider interface the engine calls (every wire protocol gets one from createProvider, a replay is one too), and the names agent.yaml chooses protocols by.
import type { LlmReply, LlmRequest } from "../conversation.js";
import type { AnsweredBy } from "../journal/events.js";
import type { AttemptFailure } from "./failure.js";
import type { Unavailable } from "./unavailable.js";

/** How one attempt ended, for the budget that admitted it. */
export type AttemptOutcome = { reply: LlmReply } | { failure: AttemptFailure };

/** What a budget counted for an attempt beyond the usage its provider reported: its reservation, when the attempt may have been billed and no usage says for how much. */
export interface BudgetCharge {
  /** null when no price is known (a token budget only). */
  usd: number | null;
  tokens: number;
}

/** An attempt a budget let through: settled once it ends, with what it cost. */
export interface AttemptAdmission {
  /** Replaces the attempt's reservation with its cost; returns the charge made beyond reported usage, if any. */
  settle(outcome: AttemptOutcome): BudgetCharge | null;
}

/** llm.provider / DELTA_PROVIDER: Chat Completions (any OpenAI-compatible server), Anthropic Messages, OpenAI Responses. */
export const PROVIDER_NAMES = ["openai", "anthropic", "openai-responses"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface CallOptions {
  signal?: AbortSignal;
  /** Called for every attempt that failed, the last one included, before any wait: so the caller can journal and log it. */
  onFailedAttempt?: (attempt: FailedAttempt) => void;
  /** Text of the reply as a streamed reply delivers it, piece by piece (never called for a whole reply). */
  onText?: (text: string) => void;
  /**
   * Asked before every attempt is sent: a budget reserves the attempt's worst case, or throws (a DeferredError) when it
   * has no room, and nothing is sent. The admission is settled when the attempt ends, however it ends.
   */
  admit?: (request: LlmRequest) => Promise<AttemptAdmission>;
  /** Called when the model asked gave up (overloaded past its retries, or retired) and the call goes to the next of llm.fallback. */
  onFallback?: (move: FallbackMove) => void;
}

/** A call moved from one model to the next of llm.fallback. */
export interface FallbackMove {
  from: AnsweredBy;
  to: AnsweredBy;
  why: Unavailable;
  /** The error that ended the call on `from`. */
  error: Error;
}

export interface FailedAttempt {
  /** The model the attempt asked (a provider's retry loop always says). */
  model?: string;
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
  /** What a budget counted for this attempt, when it may have been billed with no usage to say for how much. */
  charged?: BudgetCharge;
}

export interface Provider {
  readonly name: string;
  complete(request: LlmRequest, options?: CallOptions): Promise<LlmReply>;
}
