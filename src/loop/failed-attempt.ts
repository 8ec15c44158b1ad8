// A failed model request attempt as the journal keeps it: its timing, its status or network error, the server's words (secrets removed, bounded), and what a budget charged for it.
import { ATTEMPT_TEXT_LIMIT, type NewEvent } from "../journal/events.js";
import type { FailedAttempt } from "../llm/types.js";
import { redactText } from "../secrets.js";

export function failedAttemptEvent(iteration: number, failed: FailedAttempt, secrets: readonly string[]): NewEvent {
  const { failure } = failed;
  const text = (value: string): string => attemptText(value, secrets);
  return {
    type: "LLM_ATTEMPT_FAILED",
    iteration,
    attempt: failed.attempt,
    started_at: new Date(failed.startedAt).toISOString(),
    duration_ms: failed.durationMs,
    reason: text(failure.reason),
    ...(failure.status !== undefined && Number.isInteger(failure.status) ? { http_status: failure.status } : {}),
    ...(failure.words ? { server_message: text(failure.words.message) } : {}),
    ...(failure.words?.code ? { server_code: text(failure.words.code) } : {}),
    retry_in_ms: failed.retryInMs,
    ...(failed.charged ? { budget_charge: failed.charged } : {}),
    ...(failed.model !== undefined ? { model: failed.model } : {}),
  };
}

/** A text of a failed attempt as the journal keeps it: secrets removed, at most ATTEMPT_TEXT_LIMIT characters. */
export function attemptText(value: string, secrets: readonly string[]): string {
  return bounded(redactText(value, secrets));
}

/** At most ATTEMPT_TEXT_LIMIT characters and an ellipsis, never half of a surrogate pair. */
function bounded(text: string): string {
  if (text.length <= ATTEMPT_TEXT_LIMIT) return text;
  const cut = /[\ud800-\udbff]/.test(text[ATTEMPT_TEXT_LIMIT - 1]!) ? ATTEMPT_TEXT_LIMIT - 1 : ATTEMPT_TEXT_LIMIT;
  return `${text.slice(0, cut)}…`;
}
