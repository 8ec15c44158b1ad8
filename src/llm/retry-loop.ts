// The retry loop every wire protocol shares: backoff or the server's wait for transient failures, one more try for an unusable reply, typed errors for the rest.
import type { LlmReply, LlmRequest } from "../conversation.js";
import { ContextOverflowError, LlmError, ModelRefusedError } from "../errors.js";
import { AttemptFailed } from "./attempt.js";
import { describeFailure, hintFor, type AttemptFailure } from "./failure.js";
import type { ProviderSettings } from "./provider-settings.js";
import { backoffDelayMs, sleep } from "./transport/backoff.js";
import type { CallOptions, Provider } from "./types.js";

/** One attempt of a protocol; `withoutEcho` asks it to leave out what earlier replies asked to have back. */
type Attempt = (request: LlmRequest, options: { signal: AbortSignal | undefined; withoutEcho: boolean; onText: ((text: string) => void) | undefined }) => Promise<LlmReply>;

/** A reply that cannot be used cost a generation: it is asked for again once, never more. */
const UNUSABLE_RETRIES = 1;

export function retryingProvider(name: string, settings: ProviderSettings, attempt: Attempt): Provider {
  const { endpoint, maxRetries, policy } = settings;
  // Once this server refused the extras its replies carry, later calls of this process leave them out from the start.
  let withoutEcho = false;
  return {
    name,
    async complete(request: LlmRequest, options: CallOptions = {}): Promise<LlmReply> {
      let retries = 0;
      let unusable = 0;
      for (let number = 1; ; number += 1) {
        if (options.signal?.aborted) throw aborted(endpoint);
        let failure: AttemptFailure;
        const startedAt = Date.now();
        try {
          return await attempt(request, { signal: options.signal, withoutEcho, onText: options.onText });
        } catch (err) {
          if (options.signal?.aborted) throw aborted(endpoint);
          if (!(err instanceof AttemptFailed)) throw err;
          failure = err.failure;
        }
        const failed = (retryInMs: number | null, reason = describeFailure(failure)): void =>
          options.onFailedAttempt?.({ attempt: number, startedAt, durationMs: Date.now() - startedAt, failure, reason, retryInMs });
        if (failure.kind === "echo-refused" && !withoutEcho) {
          withoutEcho = true;
          failed(0, `${describeFailure(failure)}; sending again without the reasoning fields of earlier replies`);
          continue;
        }
        const budget = failure.kind === "unusable" ? Math.min(UNUSABLE_RETRIES, maxRetries) - unusable : maxRetries - retries;
        const final = finalError(endpoint, failure, number, budget);
        if (final) {
          failed(null);
          throw final;
        }
        if (failure.kind === "unusable") unusable += 1;
        else retries += 1;
        const delayMs = failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, policy.retryAfterCapMs) : backoffDelayMs(retries + unusable, policy);
        failed(delayMs);
        await sleep(delayMs, options.signal).catch(() => {
          throw aborted(endpoint);
        });
      }
    },
  };
}

/** The error that ends the call after this failure, or null when another attempt may follow. */
function finalError(endpoint: string, failure: AttemptFailure, attempts: number, budget: number): Error | null {
  if (failure.overflow) return new ContextOverflowError(overflowMessage(endpoint, failure), failure.overflow);
  if (failure.filtered) return new ModelRefusedError(`The provider's content filter refused the request to ${endpoint} (${describeFailure(failure)}); rephrase the task and continue the run with -m.`);
  if (failure.kind === "refused" || failure.kind === "echo-refused") return new LlmError(refusedMessage(endpoint, failure));
  return budget <= 0 ? new LlmError(exhaustedMessage(endpoint, failure, attempts)) : null;
}

function aborted(endpoint: string): LlmError {
  return new LlmError(`The model request to ${endpoint} was aborted.`);
}

function refusedMessage(endpoint: string, failure: AttemptFailure): string {
  const hint = hintFor(failure);
  return `The model endpoint ${endpoint} refused the request (${describeFailure(failure)}); not retried.${hint ? ` ${hint}` : ""}`;
}

function exhaustedMessage(endpoint: string, failure: AttemptFailure, attempts: number): string {
  const hint = hintFor(failure);
  return `The model endpoint ${endpoint} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${describeFailure(failure)}.${hint ? ` ${hint}` : ""}`;
}

function overflowMessage(endpoint: string, failure: AttemptFailure): string {
  const { limitTokens, requestedTokens } = failure.overflow ?? {};
  const sizes = limitTokens !== undefined || requestedTokens !== undefined ? ` (${requestedTokens ?? "?"} tokens asked of a ${limitTokens ?? "?"}-token window)` : "";
  return (
    `The conversation is longer than the model's context window${sizes}: ${endpoint} said ${describeFailure(failure)}. ` +
    "Keep fewer iterations in the context (journal max_iterations or max_tokens in context.yaml, or llm.context_window in agent.yaml), print less from tools, or use a model with a larger window; then `delta continue`."
  );
}
