// One place where the engine reacts to every hook outcome: ignored failures and blocks reported once.
import { failsClosed } from "../hooks/decide.js";
import type { HookOutcome } from "../hooks/run-hook.js";
import type { HookName } from "../hooks/schema.js";

/**
 * A post_* / on_* hook that failed open or asked to block (which means nothing there) is reported as a
 * warning; the outcome is returned for the caller. Reasons quote a hook's stderr: each output they reach
 * removes secrets itself (see secrets.ts).
 */
export function reportHookOutcome(hook: HookName, outcome: HookOutcome, warn: (line: string) => void): HookOutcome {
  const safe = outcome;
  if (safe.kind === "continue" && safe.warning !== undefined) warn(`[warning] ${safe.warning}`);
  if (safe.kind === "block" && !failsClosed(hook)) warn(`[warning] ${hook} hook asked to block, which it cannot do; ignored: ${safe.reason}`);
  return safe;
}
