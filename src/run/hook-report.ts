// One place where the engine reacts to every hook outcome: secrets removed, ignored failures and blocks reported once.
import { failsClosed } from "../hooks/decide.js";
import type { HookOutcome } from "../hooks/run-hook.js";
import type { HookName } from "../hooks/schema.js";
import { redactText } from "../llm/redact.js";

/**
 * Reasons and warnings quote a hook's stderr, and they go to the journal (as observations), engine.log
 * and the terminal, so known secrets are removed first. A post_* / on_* hook that failed open or asked
 * to block (which means nothing there) is reported as a warning; the outcome is returned for the caller.
 */
export function reportHookOutcome(hook: HookName, outcome: HookOutcome, secrets: readonly string[], warn: (line: string) => void): HookOutcome {
  const safe = redactOutcome(outcome, secrets);
  if (safe.kind === "continue" && safe.warning !== undefined) warn(`[warning] ${safe.warning}`);
  if (safe.kind === "block" && !failsClosed(hook)) warn(`[warning] ${hook} hook asked to block, which it cannot do; ignored: ${safe.reason}`);
  return safe;
}

function redactOutcome(outcome: HookOutcome, secrets: readonly string[]): HookOutcome {
  if (outcome.kind === "block") return { ...outcome, reason: redactText(outcome.reason, secrets) };
  if (outcome.kind === "continue" && outcome.warning !== undefined) return { ...outcome, warning: redactText(outcome.warning, secrets) };
  return outcome;
}
