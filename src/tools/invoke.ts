// Runs one tool call through the process runner and turns its facts into the observation and status.
import { runProcess, type ProcessResult } from "../process/run-process.js";
import type { SandboxBox } from "../process/sandbox/argv.js";
import { describeSpawnFailure } from "../process/spawn-failure.js";
import { formatObservation } from "./observation.js";
import { DEFAULT_MAX_OBSERVATION_BYTES } from "./output-bound.js";

export interface InvokeRequest {
  argv: string[];
  /** Fed to the process's stdin; without it stdin is closed so a reader never waits. */
  stdin?: string | undefined;
  cwd: string;
  /** Set on top of `baseEnv`. */
  env: Record<string, string>;
  /** The environment the tool starts from: the engine's own without the run's secrets (run/child-env.ts), or the box's. */
  baseEnv: Record<string, string>;
  timeoutMs: number;
  maxObservationBytes?: number;
  /** Aborting it (the engine was interrupted) kills the tool's whole process group. */
  signal?: AbortSignal | undefined;
  /** Told the tool's process group id as soon as it is spawned. */
  onSpawn?: (pgid: number) => void;
  /** Run inside this box (bubblewrap); `baseEnv` is then the box's filtered environment. */
  sandbox?: SandboxBox | undefined;
}

type InvokeStatus = "SUCCESS" | "FAILED" | "ERROR";

/** The process's facts, its spawn failure as the sentence the model reads, and what the run makes of them. */
export interface InvokeResult extends ProcessResult<string> {
  /** What the model sees: bounded output plus notes on how the process ended. */
  observation: string;
  status: InvokeStatus;
}

/** Output kept in memory per stream; past it the process is stopped rather than exhausting memory. */
export const MAX_CAPTURE_CHARS = 64 * 1024 * 1024;

export async function invokeTool(request: InvokeRequest): Promise<InvokeResult> {
  if (request.argv[0] === undefined || request.argv[0] === "") return notStarted("the tool's command is empty", false);
  if (request.signal?.aborted) return notStarted(null, true);

  const ended = await runProcess({
    argv: request.argv,
    cwd: request.cwd,
    env: { ...request.baseEnv, ...request.env },
    stdin: request.stdin,
    timeoutMs: request.timeoutMs,
    signal: request.signal,
    capture: { keep: "head", maxChars: MAX_CAPTURE_CHARS },
    onSpawn: request.onSpawn,
    sandbox: request.sandbox,
  });
  const spawnError = ended.spawnError ? describeSpawnFailure(ended.spawnError) : null;
  const stoppedByEngine = ended.timedOut || ended.aborted || ended.overLimit;
  const observation = formatObservation(
    {
      stdout: ended.stdout,
      stderr: ended.stderr,
      timedOut: ended.timedOut,
      timeoutMs: request.timeoutMs,
      aborted: ended.aborted,
      spawnError,
      signal: stoppedByEngine ? null : ended.signal,
      captureLimit: ended.overLimit ? MAX_CAPTURE_CHARS : null,
      outputLeftOpen: ended.outputLeftOpen,
    },
    request.maxObservationBytes ?? DEFAULT_MAX_OBSERVATION_BYTES,
  );
  const status: InvokeStatus = spawnError !== null || stoppedByEngine ? "ERROR" : ended.exitCode === 0 ? "SUCCESS" : "FAILED";
  return { ...ended, spawnError, observation, status };
}

function notStarted(spawnError: string | null, aborted: boolean): InvokeResult {
  const observation = spawnError ?? "[interrupted before the tool started]";
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted,
    overLimit: false,
    outputLeftOpen: false,
    spawnError,
    stdout: "",
    stderr: "",
    durationMs: 0,
    observation,
    status: "ERROR",
  };
}
