// How long to wait before retrying a model request when the server did not say: exponential backoff with jitter; and the wait itself.
export interface BackoffPolicy {
  baseMs: number;
  /** Longest computed backoff. */
  capMs: number;
  /** llm.max_retry_wait_ms: the longest wait a run sleeps through; a limit asking for more defers the run instead. */
  maxWaitMs: number;
}

export const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 20_000, maxWaitMs: DEFAULT_MAX_RETRY_WAIT_MS };

/** Delay before retry number `retry` (1-based): base·2^(retry−1), capped, scaled by a jitter in [0.8, 1.2). */
export function backoffDelayMs(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** (retry - 1));
  return Math.round(Math.min(policy.capMs, exponential * (0.8 + 0.4 * random())));
}

/** Resolves after `ms`, or rejects at once with the signal's reason when it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
