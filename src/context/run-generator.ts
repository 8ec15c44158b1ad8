// Runs a computed_file source's generator and turns any failure into an error that says what to fix.
import { EngineError } from "../errors.js";
import { runProcess } from "../process/run-process.js";
import type { SandboxBox } from "../process/sandbox/argv.js";
import { describeSpawnFailure } from "../process/spawn-failure.js";

interface GeneratorRun {
  label: string;
  /** The field holding the command, e.g. `sources[2].generator`. */
  field: string;
  argv: string[];
  cwd: string;
  /** Set on top of `baseEnv`. */
  env: Record<string, string>;
  /** The environment the generator starts from: the engine's own without the run's secrets, or the box's. */
  baseEnv: Record<string, string>;
  /** Run in this box (agent.yaml `sandbox.hooks: true`). */
  sandbox?: SandboxBox | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** How much of a failing generator's stderr an error message quotes: its end, where errors are. */
const STDERR_TAIL_CHARS = 2_000;
/** Output kept in memory per stream; past it the generator is stopped. */
const MAX_CAPTURE_CHARS = 64 * 1024 * 1024;

/** Resolves with the run's duration once the generator exited 0; throws EngineError otherwise. */
export async function runGenerator(run: GeneratorRun): Promise<number> {
  const result = await runProcess({
    argv: run.argv,
    cwd: run.cwd,
    env: { ...run.baseEnv, ...run.env },
    timeoutMs: run.timeoutMs,
    signal: run.signal,
    capture: { keep: "head", maxChars: MAX_CAPTURE_CHARS },
    sandbox: run.sandbox,
  });
  const prefix = `context.yaml source ${run.label}: generator ${JSON.stringify(run.argv)}`;
  if (result.aborted) throw new EngineError(`${prefix} was interrupted`);
  if (result.spawnError !== null) throw new EngineError(`${prefix} could not start: ${describeSpawnFailure(result.spawnError)}. Fix ${run.field}.command.`);
  const tail = stderrTail(result.stderr);
  if (result.timedOut) {
    throw new EngineError(`${prefix} timed out after ${run.timeoutMs} ms and was killed; make it faster or raise ${run.field}.timeout_ms.${tail}`);
  }
  if (result.overLimit) throw new EngineError(`${prefix} wrote more than ${MAX_CAPTURE_CHARS / (1024 * 1024)} MiB to stdout or stderr and was stopped; make it write its output to the file instead.`);
  if (result.exitCode === 0) return result.durationMs;
  const how = result.exitCode === null ? `was killed by ${result.signal ?? "a signal"}` : `exited with code ${result.exitCode}`;
  throw new EngineError(`${prefix} ${how}.${tail}`);
}

function stderrTail(stderr: string): string {
  const trimmed = stderr.trimEnd();
  if (trimmed === "") return " It wrote nothing to stderr.";
  const tail = trimmed.length > STDERR_TAIL_CHARS ? `…${trimmed.slice(-STDERR_TAIL_CHARS)}` : trimmed;
  return `\nstderr:\n${tail}`;
}
