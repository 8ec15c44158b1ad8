// Which failed calls a fallback model takes over: a model still overloaded after its retries (503, 529), or one its endpoint does not know (retired or renamed: 404, model not found). A rate limit or a quota is no such failure: the run waits for it.
import type { AttemptFailure } from "./failure.js";

export type Unavailable = "overloaded" | "retired";

/** Statuses of a server too busy to answer (unavailable, Anthropic's overloaded); 429 is the account's own limit and defers. */
const OVERLOADED_STATUSES = new Set([503, 529]);
/** Codes servers give a model they do not serve: OpenAI, Groq and Anthropic's, and Groq's for a decommissioned model. */
const RETIRED_CODES = new Set(["model_not_found", "not_found_error", "model_decommissioned"]);
/** A 400 that says the model is gone, in the words servers use (OpenRouter's "is not a valid model ID"). */
const RETIRED_WORDS = /\bmodel\b.*\b(not found|does not exist|not a valid model|decommissioned|deprecated|retired|no longer (available|supported))/i;

/** The call's final failure as a reason to ask the next model, or null when it is not one. */
export function unavailability(failure: AttemptFailure): Unavailable | null {
  if (failure.kind === "quota" || failure.overflow || failure.filtered) return null;
  if (failure.kind === "transient" && failure.limited && (OVERLOADED_STATUSES.has(failure.status ?? 0) || failure.words?.code === "overloaded_error")) return "overloaded";
  if (failure.kind !== "refused") return null;
  if (failure.status === 404) return "retired";
  const words = failure.words;
  if (words && ((words.code !== undefined && RETIRED_CODES.has(words.code)) || RETIRED_WORDS.test(words.message))) return "retired";
  return null;
}

const marks = new WeakMap<Error, Unavailable>();

/** `err` ends a call whose model was unavailable: a fallback may take the call. */
export function markUnavailable<E extends Error>(err: E, why: Unavailable | null): E {
  if (why !== null) marks.set(err, why);
  return err;
}

/** Why the call that threw `err` may go to the next model (an error wrapping another counts as it), or null. */
export function unavailableReason(err: unknown): Unavailable | null {
  for (let at = err; at instanceof Error; at = at.cause) {
    const why = marks.get(at);
    if (why !== undefined) return why;
  }
  return null;
}
