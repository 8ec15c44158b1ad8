// The Provider interface every wire protocol implements.
import type { LlmReply, LlmRequest } from "../conversation.js";

export interface CallOptions {
  signal?: AbortSignal;
  /** Called before each retry so the caller can log it. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export interface Provider {
  readonly name: string;
  complete(request: LlmRequest, options?: CallOptions): Promise<LlmReply>;
}
