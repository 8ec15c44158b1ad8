// Turns what a hook process did into the engine's outcome: continue, block, or fail open/closed.
import type { HookName } from "./schema.js";
import type { ProcessResult } from "../process/run-process.js";
import type { HookOutcome } from "./types.js";

/** Reasons become tool observations and log lines, so they are kept readable in size. */
export const REASON_MAX_CHARS = 8 * 1024;
const FAILURE_DETAIL_MAX_CHARS = 2 * 1024;

/** pre_* hooks guard something that has not happened yet, so when they fail the engine fails closed. */
export function failsClosed(hook: HookName): boolean {
  return hook.startsWith("pre_");
}

/**
 * Exit 0 continues, unless stdout is `{"decision":"block"}`; exit 2 blocks with stderr as the reason.
 * Anything else is a failure: a block for pre_* hooks, a warning for post_* and on_* hooks.
 * Blocks from post_* / on_* hooks are still returned as blocks: the engine ignores them with a warning where blocking means nothing.
 */
export function decideOutcome(hook: HookName, result: ProcessResult<string>, timeoutMs: number): HookOutcome {
  const failure = describeFailure(result, timeoutMs);
  if (failure !== null) {
    const message = `${hook} hook failed: ${failure}`;
    return failsClosed(hook) ? { kind: "block", reason: message } : { kind: "continue", warning: message };
  }
  if (result.exitCode === 2) {
    const reason = firstNonEmpty(result.stderr, result.stdout) ?? `blocked by ${hook} hook (exit 2)`;
    return { kind: "block", reason: clip(reason, REASON_MAX_CHARS) };
  }
  const output = parseJsonObject(result.stdout);
  if (output?.decision === "block") {
    const reason = typeof output.reason === "string" ? output.reason.trim() : "";
    return { kind: "block", reason: reason === "" ? `blocked by ${hook} hook` : clip(reason, REASON_MAX_CHARS) };
  }
  return output === undefined ? { kind: "continue" } : { kind: "continue", output };
}

/** What went wrong, or null when the hook ran and exited 0 or 2. */
function describeFailure(result: ProcessResult<string>, timeoutMs: number): string | null {
  if (result.spawnError !== null) return result.spawnError;
  if (result.aborted) return "stopped because the run was interrupted";
  if (result.timedOut) return `timed out after ${timeoutMs} ms`;
  if (result.overLimit) return "its output was too large";
  if (result.signal !== null) return withDetail(`killed by ${result.signal}`, result.stderr);
  if (result.exitCode === 0 || result.exitCode === 2) return null;
  return withDetail(`exit ${result.exitCode ?? "unknown"}`, result.stderr);
}

function withDetail(summary: string, stderr: string): string {
  const detail = stderr.trim();
  return detail === "" ? summary : `${summary}: ${tail(detail, FAILURE_DETAIL_MAX_CHARS)}`;
}

/** A JSON object on stdout, or undefined for empty output, plain text, arrays and other JSON values. */
export function parseJsonObject(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trim();
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function firstNonEmpty(...texts: string[]): string | undefined {
  return texts.map((text) => text.trim()).find((text) => text !== "");
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

function tail(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(-max)}`;
}
