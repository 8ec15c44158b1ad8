// Runs a session's wrapper script through the process runner; its group dies at once on timeout or when delta-sessions is told to stop.
import { constants } from "node:os";
import { runProcess } from "../process/run-process.js";
import { describeSpawnFailure } from "../process/spawn-failure.js";

/** Output kept per stream: the head and tail halves of this, with a marker between. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024;

interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  outputLimitBytes: number;
}

/** What `exec` reports and `start` checks. */
export interface WrapperOutcome {
  stdout: string;
  stderr: string;
  /** null after a timeout; 128 + the signal's number when a signal ended it, as a shell reports. */
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** Set when delta-sessions itself was asked to stop while the command ran. */
  interruptedBy: NodeJS.Signals | null;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  spawnError: string | null;
}

const FORWARDED_SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];

export async function runWrapper(argv: readonly string[], options: RunOptions): Promise<WrapperOutcome> {
  const interrupt = new AbortController();
  let interruptedBy: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    interruptedBy = signal;
    interrupt.abort();
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, onSignal);
  try {
    const result = await runProcess({
      argv,
      cwd: options.cwd,
      env: options.env,
      timeoutMs: options.timeoutMs,
      signal: interrupt.signal,
      killGraceMs: 0,
      capture: { keep: "head-and-tail", maxBytes: options.outputLimitBytes },
    });
    return {
      stdout: result.stdout,
      stderr: result.stderr,
      exitCode: result.timedOut ? null : exitCodeOf(result.exitCode, result.signal),
      timedOut: result.timedOut,
      durationMs: result.durationMs,
      interruptedBy,
      spawnError: result.spawnError === null ? null : describeSpawnFailure(result.spawnError),
    };
  } finally {
    for (const signal of FORWARDED_SIGNALS) process.off(signal, onSignal);
  }
}

function exitCodeOf(exitCode: number | null, signal: NodeJS.Signals | null): number | null {
  if (exitCode !== null) return exitCode;
  if (signal !== null) return 128 + constants.signals[signal];
  return null;
}
