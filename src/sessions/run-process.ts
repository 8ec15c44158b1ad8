// Runs one process in its own process group with bounded output, a timeout and signal forwarding.
import { constants } from "node:os";
import { execa } from "execa";
import { BoundedCapture } from "./capture.js";

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  outputLimitBytes: number;
}

/** Flat facts about one run, in the spirit of execa's result. */
export interface ProcessOutcome {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** Set when delta-sessions itself was asked to stop while the command ran. */
  interruptedBy: NodeJS.Signals | null;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  spawnError: string | null;
}

const FORWARDED_SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];
/** After the main process exits, how long to wait for background children to release the pipes. */
const PIPE_GRACE_MS = 200;

export async function runBounded(argv: readonly string[], options: RunOptions): Promise<ProcessOutcome> {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error("runBounded needs a program to run");
  const stdout = new BoundedCapture(options.outputLimitBytes);
  const stderr = new BoundedCapture(options.outputLimitBytes);
  // Start counting time before spawning the process.
  const started = performance.now();
  const subprocess = execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    stdin: "ignore",
    buffer: false,
    reject: false,
    // Its own process group, so a timeout can kill the command's children too (execa's timeout kills only the leader).
    detached: true,
  });
  subprocess.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
  subprocess.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));

  const killGroup = (): void => {
    if (subprocess.pid === undefined) return;
    try {
      process.kill(-subprocess.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.timeoutMs);
  let interruptedBy: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    interruptedBy = signal;
    killGroup();
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, onSignal);
  // A background job (`sleep 100 &`) keeps the pipes open; stop reading once the main process is gone.
  subprocess.on("exit", () => {
    setTimeout(() => {
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, PIPE_GRACE_MS).unref();
  });

  try {
    const result = await subprocess;
    const spawnFailed = result.exitCode === undefined && result.signal === undefined;
    return {
      stdout: stdout.text(),
      stderr: stderr.text(),
      exitCode: timedOut ? null : exitCodeOf(result.exitCode, result.signal),
      timedOut,
      durationMs: Math.round(performance.now() - started),
      interruptedBy,
      spawnError: spawnFailed ? (result.message ?? "the process could not be started") : null,
    };
  } finally {
    clearTimeout(timer);
    for (const signal of FORWARDED_SIGNALS) process.off(signal, onSignal);
  }
}

/** A process killed by a signal reports 128 + its number, as a shell would. */
function exitCodeOf(exitCode: number | undefined, signal: NodeJS.Signals | undefined): number | null {
  if (exitCode !== undefined) return exitCode;
  if (signal !== undefined) return 128 + constants.signals[signal];
  return null;
}
