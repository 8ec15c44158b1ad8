// The HOOK_RESULT event a hook's execution journals: its outcome and where its record is, never what it read or printed.
import { relative } from "node:path";
import type { HookRecord } from "../hooks/run-hook.js";
import type { HookName } from "../hooks/schema.js";
import type { NewEvent } from "../journal/events.js";

/**
 * Whether a hook's outcome is journaled: on_run_end runs after ENGINE_END, which stays the last event
 * of an invocation (readers and the size metadata.json keeps rely on it); its outcome is in io/hooks/ only.
 */
export function journalsHookResult(hook: HookName): boolean {
  return hook !== "on_run_end";
}

export function hookResultEvent(record: HookRecord, iteration: number, recordPath: string, runDir: string): NewEvent {
  const { outcome } = record;
  return {
    type: "HOOK_RESULT",
    hook: record.hook,
    iteration,
    outcome: outcome.kind === "block" ? "block" : outcome.kind === "continue" && outcome.warning !== undefined ? "failed_open" : "continue",
    exit_code: record.exit_code,
    timed_out: record.timed_out,
    started_at: record.started_at,
    duration_ms: record.duration_ms,
    record: relative(runDir, recordPath),
  };
}
