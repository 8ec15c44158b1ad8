// How long to wait before retrying a model request: exponential backoff with jitter, or the server's Retry-After.
export interface BackoffPolicy {
  baseMs: number;
  /** Longest computed backoff. */
  capMs: number;
  /** Longest Retry-After we honour; a server asking for more gets this much. */
  retryAfterCapMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 20_000, retryAfterCapMs: 60_000 };

/** Delay before retry number `retry` (1-based): base·2^(retry−1), capped, scaled by a jitter in [0.8, 1.2). */
export function backoffDelayMs(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** (retry - 1));
  return Math.round(Math.min(policy.capMs, exponential * (0.8 + 0.4 * random())));
}

/**
 * The server's requested wait in ms, from `retry-after-ms`, or `Retry-After` as seconds or an
 * HTTP date; null when absent or unreadable.
 */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, now: number = Date.now()): number | null {
  const precise = headers?.get("retry-after-ms");
  if (precise) {
    const ms = Number(precise);
    if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  }
  const value = headers?.get("retry-after")?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
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
