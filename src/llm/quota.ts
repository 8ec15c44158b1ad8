// Tells an account out of money from a rate limit, by the server's words: OpenAI's quota 429, Anthropic's credit 400 and spend-limit 429/400, payment errors.
import type { ServerWords } from "./server-words.js";

/** Codes that mean the account, not the request or the moment, is the problem. */
const QUOTA_CODES = new Set(["insufficient_quota", "billing_hard_limit_reached", "billing_error", "enforced_spend_limit_reached"]);

/**
 * The messages of the same: OpenAI's "You exceeded your current quota" (recorded, a 429 with no retry header), Anthropic's
 * "Your credit balance is too low" (recorded, a 400 with X-Should-Retry: false), and its documented spend limits, "You have
 * reached your API usage limits" (429) and "…your specified (workspace) API usage limits" (400).
 */
const QUOTA_WORDS = /exceeded your current quota|credit balance is too low|reached your (specified )?(workspace )?API usage limits?|insufficient (credits|balance|funds)/i;

/** Anthropic's documented spend-cap message names the moment access returns: "You will regain access on 2026-09-01 at 00:00 UTC." */
const ACCESS_RETURNS = /regain access on (\d{4}-\d{2}-\d{2}) at (\d{2}:\d{2})(?::(\d{2}))? UTC/i;

/** Null when the failure is not a quota; else when access returns (ISO-8601 UTC), or null inside when the server did not say. */
export function quotaOf(status: number | undefined, words: ServerWords | undefined): { accessReturns: string | null } | null {
  const isQuota = status === 402 || (words !== undefined && ((words.code !== undefined && QUOTA_CODES.has(words.code)) || (words.detail !== undefined && QUOTA_CODES.has(words.detail)) || QUOTA_WORDS.test(words.message)));
  if (!isQuota) return null;
  const named = words === undefined ? null : ACCESS_RETURNS.exec(words.message);
  if (!named) return { accessReturns: null };
  const at = Date.parse(`${named[1]}T${named[2]}:${named[3] ?? "00"}Z`);
  return { accessReturns: Number.isNaN(at) ? null : new Date(at).toISOString() };
}
