// Runs a computed_file source's generator and turns any failure into an error that says what to fix.
import { EngineError } from "../errors.js";
import { invokeTool } from "../tools/invoke.js";

export interface GeneratorRun {
  label: string;
  /** The field holding the command, e.g. `sources[2].generator`. */
  field: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** How much of a failing generator's stderr an error message quotes: its end, where errors are. */
export const STDERR_TAIL_CHARS = 2_000;

/** Resolves with the run's duration once the generator exited 0; throws EngineError otherwise. */
export async function runGenerator(run: GeneratorRun): Promise<number> {
  const result = await invokeTool({
    argv: run.argv,
    cwd: run.cwd,
    env: run.env,
    timeoutMs: run.timeoutMs,
    // The model never sees a generator's output, so keep none of it in the observation.
    maxObservationBytes: 0,
    ...(run.signal ? { signal: run.signal } : {}),
  });
  if (result.status === "SUCCESS") return result.durationMs;

  const prefix = `context.yaml source ${run.label}: generator ${JSON.stringify(run.argv)}`;
  if (result.aborted) throw new EngineError(`${prefix} was interrupted`);
  if (result.spawnError !== null) throw new EngineError(`${prefix} could not start: ${result.spawnError}. Fix ${run.field}.command.`);
  const tail = stderrTail(result.stderr);
  if (result.timedOut) {
    throw new EngineError(`${prefix} timed out after ${run.timeoutMs} ms and was killed; make it faster or raise ${run.field}.timeout_ms.${tail}`);
  }
  const how = result.exitCode === null ? `was killed by ${result.signal ?? "a signal"}` : `exited with code ${result.exitCode}`;
  throw new EngineError(`${prefix} ${how}.${tail}`);
}

function stderrTail(stderr: string): string {
  const trimmed = stderr.trimEnd();
  if (trimmed === "") return " It wrote nothing to stderr.";
  const tail = trimmed.length > STDERR_TAIL_CHARS ? `…${trimmed.slice(-STDERR_TAIL_CHARS)}` : trimmed;
  return `\nstderr:\n${tail}`;
}
