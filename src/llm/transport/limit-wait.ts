// How long a limited server asks to be left alone: retry-after-ms, Retry-After, else the reset headers of the limit it ran out of (OpenAI's durations, Anthropic's times).
type Headers = { get(name: string): string | null };

/** The server's wait and the header it came from, named for messages. */
interface ServerWait {
  ms: number;
  /** `retry-after`, `x-ratelimit-reset-tokens`, `anthropic-ratelimit-requests-reset`… */
  header: string;
}

/** The limits whose reset headers the providers send: `<prefix><kind>-reset` (Anthropic) or `<prefix>reset-<kind>` (OpenAI, Azure). */
const OPENAI_KINDS = ["requests", "tokens", "input-images", "tokens_usage_based"] as const;
const ANTHROPIC_KINDS = ["requests", "tokens", "input-tokens", "output-tokens"] as const;

/**
 * The wait a failed reply asks for: `retry-after-ms` or `Retry-After` when present; else the latest reset among the limits
 * the reply says are used up (remaining 0, or not given). Only ever read on a failure: Anthropic sends Retry-After on
 * successful replies too. `now`: this host's clock; Anthropic's reset times are measured from the server's `Date` when it sent one.
 */
export function serverWait(headers: Headers, now: number = Date.now()): ServerWait | null {
  const asked = askedWait(headers, now);
  if (asked !== null) return asked;
  let latest: ServerWait | null = null;
  const consider = (header: string, ms: number | null, remaining: string | null): void => {
    if (ms === null || !usedUp(remaining)) return;
    if (latest === null || ms > latest.ms) latest = { ms, header };
  };
  for (const kind of OPENAI_KINDS) {
    const header = `x-ratelimit-reset-${kind}`;
    consider(header, durationMs(headers.get(header)), headers.get(`x-ratelimit-remaining-${kind}`));
  }
  const serverNow = serverClock(headers) ?? now;
  for (const kind of ANTHROPIC_KINDS) {
    const header = `anthropic-ratelimit-${kind}-reset`;
    consider(header, untilMs(headers.get(header), serverNow), headers.get(`anthropic-ratelimit-${kind}-remaining`));
  }
  return latest;
}

/** `retry-after-ms`, or `Retry-After` as seconds or an HTTP date; null when absent or unreadable. */
function askedWait(headers: Headers, now: number): ServerWait | null {
  const precise = headers.get("retry-after-ms")?.trim();
  if (precise && Number.isFinite(Number(precise)) && Number(precise) >= 0) return { ms: Math.round(Number(precise)), header: "retry-after-ms" };
  const value = headers.get("retry-after")?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return { ms: Math.round(Number(value) * 1000), header: "retry-after" };
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : { ms: Math.max(0, date - now), header: "retry-after" };
}

/** A limit counts as the one that was hit when nothing of it is left, or when the reply does not say. */
function usedUp(remaining: string | null): boolean {
  if (remaining === null) return true;
  const value = Number(remaining.trim());
  return Number.isFinite(value) && value <= 0;
}

const DURATION_UNITS_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, "µs": 0.001, ns: 0.000_001 };

/**
 * OpenAI's reset: a Go duration (`1s`, `6m0s`, `736ms`, `1m13.588s`); Azure's: a bare number of seconds. A negative,
 * empty or unreadable value is unknown (null).
 */
export function durationMs(value: string | null): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (!/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(text)) return null;
  let total = 0;
  for (const part of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(part[1]) * DURATION_UNITS_MS[part[2]!]!;
  return Math.round(total);
}

/** Anthropic's reset: an RFC 3339 time; how long after `now` it falls (0 when already past), or null when unreadable. */
function untilMs(value: string | null, now: number): number | null {
  const text = value?.trim();
  if (!text || !/^\d{4}-\d{2}-\d{2}T/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The server's own clock from its `Date` header, so that its reset times are not read against a skewed local clock. */
function serverClock(headers: Headers): number | null {
  const date = headers.get("date");
  if (!date) return null;
  const at = Date.parse(date);
  return Number.isNaN(at) ? null : at;
}
