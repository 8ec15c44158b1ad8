// The retry loop every wire protocol shares: backoff or the server's wait for transient failures, one more try for an unusable reply, a deferral for a limit or quota the run must wait out, typed errors for the rest.
import type { LlmReply, LlmRequest } from "../conversation.js";
import { ContextOverflowError, DeferredError, LlmError, ModelRefusedError } from "../errors.js";
import { AttemptFailed } from "./attempt.js";
import { describeFailure, hintFor, type AttemptFailure } from "./failure.js";
import type { ProviderSettings } from "./provider-settings.js";
import { backoffDelayMs, sleep } from "./transport/backoff.js";
import type { CallOptions, Provider } from "./types.js";
import { markUnavailable, unavailability } from "./unavailable.js";

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
        // Nothing is sent that a budget has not admitted; an attempt admitted is settled however it ends.
        const admission = await options.admit?.(request);
        const startedAt = Date.now();
        const ended = await attempt(request, { signal: options.signal, withoutEcho, onText: options.onText }).then(
          (reply) => ({ reply }),
          (err: unknown) => ({ err }),
        );
        if ("reply" in ended) {
          admission?.settle(ended);
          return ended.reply;
        }
        const { err } = ended;
        const failure: AttemptFailure = err instanceof AttemptFailed && !options.signal?.aborted ? err.failure : { kind: "transient", reason: "the attempt was stopped before it ended" };
        const charged = admission?.settle({ failure }) ?? null;
        if (options.signal?.aborted) throw aborted(endpoint);
        if (!(err instanceof AttemptFailed)) throw err;
        const failed = (retryInMs: number | null, reason = describeFailure(failure)): void =>
          options.onFailedAttempt?.({ model: request.model, attempt: number, startedAt, durationMs: Date.now() - startedAt, failure, reason, retryInMs, ...(charged ? { charged } : {}) });
        if (failure.kind === "echo-refused" && !withoutEcho) {
          withoutEcho = true;
          failed(0, `${describeFailure(failure)}; sending again without the reasoning fields of earlier replies`);
          continue;
        }
        const budget = failure.kind === "unusable" ? Math.min(UNUSABLE_RETRIES, maxRetries) - unusable : maxRetries - retries;
        const backoff = backoffDelayMs(retries + unusable + 1, policy);
        const final = finalError(endpoint, failure, { attempts: number, budget, maxWaitMs: policy.maxWaitMs, backoff });
        if (final) {
          failed(null);
          throw markUnavailable(final, unavailability(failure));
        }
        const delayMs = failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, policy.maxWaitMs) : backoff;
        if (failure.kind === "unusable") unusable += 1;
        else retries += 1;
        failed(delayMs);
        await sleep(delayMs, options.signal).catch(() => {
          throw aborted(endpoint);
        });
      }
    },
  };
}

/** Where a call stands after a failure: its attempts so far, the retries left, the longest wait it sleeps, the backoff before the next. */
interface CallStand {
  attempts: number;
  budget: number;
  maxWaitMs: number;
  backoff: number;
}

/**
 * The error that ends the call after this failure, or null when another attempt may follow. A limit the run cannot
 * sleep through (a longer wait than llm.max_retry_wait_ms, or one that outlasts the retries) and a quota defer the run.
 */
function finalError(endpoint: string, failure: AttemptFailure, stand: CallStand): Error | null {
  if (failure.kind === "quota") return quotaDeferral(endpoint, failure);
  if (failure.overflow) return new ContextOverflowError(overflowMessage(endpoint, failure), failure.overflow);
  if (failure.filtered) return new ModelRefusedError(`The provider's content filter refused the request to ${endpoint} (${describeFailure(failure)}); rephrase the task and continue the run with -m.`);
  if (failure.kind === "refused" || failure.kind === "echo-refused") return new LlmError(refusedMessage(endpoint, failure));
  const asked = failure.retryAfterMs;
  if (failure.limited && asked !== undefined && asked > stand.maxWaitMs) return longWait(endpoint, failure, asked, stand.maxWaitMs);
  if (stand.budget > 0) return null;
  return failure.limited ? outlasted(endpoint, failure, stand.attempts, asked ?? stand.backoff) : new LlmError(exhaustedMessage(endpoint, failure, stand.attempts));
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

/** The run waits for the account's quota: until the provider says access returns, or its Retry-After, else a time no one knows. */
function quotaDeferral(endpoint: string, failure: AttemptFailure): DeferredError {
  const resumeAfter = failure.accessReturns ?? (failure.retryAfterMs !== undefined ? inMs(failure.retryAfterMs) : null);
  const until = resumeAfter === null ? "access returns (the provider did not say when)" : resumeAfter;
  return new DeferredError({
    reason: "QUOTA_EXHAUSTED",
    resumeAfter,
    message: `The model endpoint ${endpoint} says the account is out of quota or credit (${describeFailure(failure)}); the run waits until ${until}. Add credit or raise the account's limit, then \`delta continue\` goes on.`,
  });
}

/** A limit asks for a longer wait than the run sleeps through: the run waits outside any process instead. */
function longWait(endpoint: string, failure: AttemptFailure, waitMs: number, maxWaitMs: number): DeferredError {
  const resumeAfter = inMs(waitMs);
  return new DeferredError({
    reason: "RATE_LIMITED",
    resumeAfter,
    message: `The model endpoint ${endpoint} is rate limited (${describeFailure(failure)}) and asks to wait ${seconds(waitMs)} (${failure.waitHeader ?? "its wait"}), longer than llm.max_retry_wait_ms (${seconds(maxWaitMs)}); the run waits until ${resumeAfter}, when \`delta continue\` goes on.`,
  });
}

/** A limit that outlasted the retries: the run waits for it (the server's wait, or one more backoff) rather than failing. */
function outlasted(endpoint: string, failure: AttemptFailure, attempts: number, waitMs: number): DeferredError {
  const resumeAfter = inMs(waitMs);
  return new DeferredError({
    reason: "RATE_LIMITED",
    resumeAfter,
    message: `The model endpoint ${endpoint} was still rate limited or overloaded after ${attempts} attempt${attempts === 1 ? "" : "s"} (${describeFailure(failure)}); the run waits until ${resumeAfter}, when \`delta continue\` goes on.`,
  });
}

function inMs(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
