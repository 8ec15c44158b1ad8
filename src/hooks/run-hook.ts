// Runs the hook configured for one lifecycle point and tells the engine whether to go on.
import { runProcess, type ProcessResult } from "../process/run-process.js";
import { describeSpawnFailure, type SpawnFailure } from "../process/spawn-failure.js";
import type { SandboxBox } from "../process/sandbox/argv.js";
import { buildHookEnv, expandHookCommand, hookStdin } from "./hook-env.js";
import { decideOutcome } from "./decide.js";
import type { HookName, HooksConfig } from "./schema.js";
import type { HookOutcome, HookRecord } from "./types.js";

export type { HookOutcome, HookRecord } from "./types.js";
export { validateLlmRequestReplacement, type LlmRequestReplacement } from "./llm-request-replacement.js";
export { validatePostResponseAnnotation, type PostResponseReading, type ResponseAnnotation } from "./response-annotation.js";

export interface HookContext {
  agentHome: string;
  /** The workspace: the hook's working directory and ${CWD}. */
  cwd: string;
  runId: string;
  runDir: string;
  journalPath: string;
  iteration: number;
  /** Called once per execution; the engine writes it to io/hooks/<hook>_<ts>.json. */
  record: (hookName: HookName, record: HookRecord) => void;
  log?: (line: string) => void;
  /** The environment hooks start from (the engine's own without the run's secrets, or the box's), asked for when a hook runs. */
  baseEnv: () => Record<string, string>;
  /** Run hooks in this box (agent.yaml `sandbox.hooks: true`); `baseEnv` is then the box's environment. */
  sandbox?: SandboxBox | undefined;
  /** Aborting it (the run is interrupted) kills a running hook's process group at once. */
  signal?: AbortSignal | undefined;
}

/** Hook-specific variables; TOOL_RESULT and ERROR_MESSAGE are cut to 64 KiB (the full text is in the payload). A hook about a tool call gets the call's DELTA_ACTION_ID and DELTA_IDEMPOTENCY_KEY. */
export type HookCallEnv = {
  TOOL_NAME?: string;
  TOOL_RESULT?: string;
  ERROR_MESSAGE?: string;
  DELTA_ACTION_ID?: string;
  DELTA_IDEMPOTENCY_KEY?: string;
};

interface HookCall {
  name: HookName;
  /** The LLM request, the reply, the tool call or its result, depending on the hook. */
  payload: unknown;
  env?: HookCallEnv;
}

export async function runHook(hooks: HooksConfig, call: HookCall, ctx: HookContext): Promise<HookOutcome> {
  const definition = hooks[call.name];
  if (definition === undefined) return { kind: "none" };

  const command = expandHookCommand(definition.command, ctx);
  const stdin = hookStdin(call.name, ctx.runId, ctx.iteration, call.payload);
  const env = buildHookEnv(
    {
      ...ctx,
      toolName: call.env?.TOOL_NAME,
      toolResult: call.env?.TOOL_RESULT,
      errorMessage: call.env?.ERROR_MESSAGE,
      actionId: call.env?.DELTA_ACTION_ID,
      idempotencyKey: call.env?.DELTA_IDEMPOTENCY_KEY,
    },
    ctx.baseEnv(),
  );
  const startedAt = new Date().toISOString();
  const result = await runHookProcess(command, ctx, env, stdin, definition.timeout_ms);
  const outcome = decideOutcome(call.name, result, definition.timeout_ms);

  ctx.record(call.name, {
    hook: call.name,
    started_at: startedAt,
    command,
    cwd: ctx.cwd,
    stdin,
    stdout: result.stdout,
    stderr: result.stderr,
    exit_code: result.exitCode,
    signal: result.signal,
    timed_out: result.timedOut,
    duration_ms: result.durationMs,
    outcome,
  });
  ctx.log?.(summarize(call.name, outcome, result.durationMs));
  return outcome;
}

/** Hook output beyond this many characters per stream is a failure, not something to keep in memory or in io/hooks/. */
const HOOK_OUTPUT_MAX_CHARS = 16 * 1024 * 1024;

/** A hook's group is killed with SIGKILL at once: a hook holds the run up, so it gets no grace. */
async function runHookProcess(argv: string[], ctx: HookContext, env: Record<string, string>, stdin: string, timeoutMs: number): Promise<ProcessResult<string>> {
  if (argv[0] === undefined || argv[0] === "") return notStarted("empty command");
  if (ctx.signal?.aborted) return { ...notStarted("not started: the run is being interrupted"), aborted: true };
  const result = await runProcess({
    argv,
    cwd: ctx.cwd,
    env,
    stdin,
    timeoutMs,
    signal: ctx.signal,
    killGraceMs: 0,
    capture: { keep: "head", maxChars: HOOK_OUTPUT_MAX_CHARS },
    sandbox: ctx.sandbox,
  });
  return { ...result, spawnError: result.spawnError === null ? null : describeHookSpawnFailure(result.spawnError) };
}

function describeHookSpawnFailure(failure: SpawnFailure): string {
  if (failure.reason === "no-working-directory") return `working directory not found: ${failure.cwd}`;
  return describeSpawnFailure(failure);
}

function notStarted(reason: string): ProcessResult<string> {
  return { stdout: "", stderr: "", exitCode: null, signal: null, timedOut: false, aborted: false, overLimit: false, outputLeftOpen: false, durationMs: 0, spawnError: reason };
}

function summarize(hook: HookName, outcome: HookOutcome, durationMs: number): string {
  if (outcome.kind === "block") return `[hook] ${hook} blocked (${durationMs} ms): ${outcome.reason}`;
  if (outcome.kind === "continue" && outcome.warning !== undefined) return `[hook] ${hook} warning (${durationMs} ms): ${outcome.warning}`;
  return `[hook] ${hook} ok (${durationMs} ms)`;
}
