// Builds what a hook process starts with: the expanded argv, its environment and its stdin JSON.
import { expandArgvPathVariables } from "../tools/path-variables.js";
import type { HookName } from "./schema.js";

/** Env values are capped so a large tool result cannot make spawn fail (Linux allows 128 KiB per string). */
export const ENV_VALUE_MAX_BYTES = 64 * 1024;
const TRUNCATION_MARKER = "\n[truncated: the full text is in the stdin payload]";

interface HookPaths {
  agentHome: string;
  cwd: string;
}

interface HookEnvFacts extends HookPaths {
  runId: string;
  runDir: string;
  journalPath: string;
  iteration: number;
  toolName?: string | undefined;
  toolResult?: string | undefined;
  errorMessage?: string | undefined;
  /** The tool call a hook is about: its action id and idempotency key. */
  actionId?: string | undefined;
  idempotencyKey?: string | undefined;
}

/**
 * Expands only ${AGENT_HOME} and ${CWD}; any other text, `$` included, is passed through as written.
 * In a shell's `-c` script they become "$DELTA_AGENT_HOME" / "$DELTA_CWD", which the hook's environment holds.
 */
export function expandHookCommand(command: readonly string[], paths: HookPaths): string[] {
  return expandArgvPathVariables(command, { AGENT_HOME: paths.agentHome, CWD: paths.cwd });
}

/** Cuts a value to ENV_VALUE_MAX_BYTES of UTF-8 (on a character boundary) and drops NUL, which env cannot hold. */
export function boundEnvValue(value: string): string {
  const clean = value.replaceAll("\0", "");
  if (Buffer.byteLength(clean, "utf8") <= ENV_VALUE_MAX_BYTES) return clean;
  const budget = ENV_VALUE_MAX_BYTES - Buffer.byteLength(TRUNCATION_MARKER, "utf8");
  let bytes = 0;
  let end = 0;
  for (const char of clean) {
    const size = Buffer.byteLength(char, "utf8");
    if (bytes + size > budget) break;
    bytes += size;
    end += char.length;
  }
  return clean.slice(0, end) + TRUNCATION_MARKER;
}

/**
 * The parent's environment (the engine's without the run's secrets, or the box's) plus the hook variables;
 * hook-specific ones are removed when not given so they never leak in from a parent run.
 */
export function buildHookEnv(facts: HookEnvFacts, parentEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parentEnv)) {
    if (value !== undefined) env[key] = value;
  }
  delete env.TOOL_NAME;
  delete env.TOOL_RESULT;
  delete env.ERROR_MESSAGE;
  // A run started by another run's tool inherits that call's; a hook is told only of the call it is about.
  delete env.DELTA_ACTION_ID;
  delete env.DELTA_IDEMPOTENCY_KEY;
  Object.assign(env, {
    RUN_DIR: facts.runDir,
    JOURNAL_PATH: facts.journalPath,
    ITERATION_COUNT: String(facts.iteration),
    DELTA_RUN_ID: facts.runId,
    DELTA_AGENT_HOME: facts.agentHome,
    DELTA_CWD: facts.cwd,
  });
  if (facts.toolName !== undefined) env.TOOL_NAME = boundEnvValue(facts.toolName);
  if (facts.toolResult !== undefined) env.TOOL_RESULT = boundEnvValue(facts.toolResult);
  if (facts.errorMessage !== undefined) env.ERROR_MESSAGE = boundEnvValue(facts.errorMessage);
  if (facts.actionId !== undefined) env.DELTA_ACTION_ID = facts.actionId;
  if (facts.idempotencyKey !== undefined) env.DELTA_IDEMPOTENCY_KEY = facts.idempotencyKey;
  return env;
}

/** The one JSON object a hook reads on stdin. */
export function hookStdin(hook: HookName, runId: string, iteration: number, payload: unknown): string {
  return JSON.stringify({ hook, run_id: runId, iteration, payload: payload ?? null });
}
