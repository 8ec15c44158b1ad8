// Runs one tool process: no shell, its own process group, bounded time, complete output kept.
import { spawn, type ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { formatObservation } from "./observation.js";
import { DEFAULT_MAX_OBSERVATION_BYTES } from "./output-bound.js";

export interface InvokeRequest {
  argv: string[];
  /** Fed to the process's stdin; without it stdin is closed so a reader never waits. */
  stdin?: string;
  cwd: string;
  /** Merged onto the engine's own environment. */
  env: Record<string, string>;
  timeoutMs: number;
  maxObservationBytes?: number;
  /** Aborting it (the engine was interrupted) kills the tool's whole process group. */
  signal?: AbortSignal;
}

export type InvokeStatus = "SUCCESS" | "FAILED" | "ERROR";

export interface InvokeResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  spawnError: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** What the model sees: bounded output plus notes on how the process ended. */
  observation: string;
  status: InvokeStatus;
}

/** Output kept in memory per stream; past it the process is stopped rather than exhausting memory. */
export const MAX_CAPTURE_CHARS = 64 * 1024 * 1024;
/** Time a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2_000;
// setTimeout fires at once for delays that do not fit in a signed 32-bit integer.
const MAX_TIMER_MS = 2_147_483_647;

export async function invokeTool(request: InvokeRequest): Promise<InvokeResult> {
  const [file, ...args] = request.argv;
  if (file === undefined || file === "") return notStarted("the tool's command is empty", false);
  if (request.signal?.aborted) return notStarted(null, true);

  const ended = await runProcess(file, args, request);
  const spawnError = ended.error ? describeSpawnError(file, request.cwd, ended.error) : null;
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
    },
    request.maxObservationBytes ?? DEFAULT_MAX_OBSERVATION_BYTES,
  );
  const status: InvokeStatus = spawnError !== null || stoppedByEngine ? "ERROR" : ended.exitCode === 0 ? "SUCCESS" : "FAILED";
  return {
    exitCode: ended.exitCode,
    signal: ended.signal,
    timedOut: ended.timedOut,
    aborted: ended.aborted,
    spawnError,
    stdout: ended.stdout,
    stderr: ended.stderr,
    durationMs: ended.durationMs,
    observation,
    status,
  };
}

interface ProcessEnd {
  exitCode: number | null;
  signal: string | null;
  /** Set when the process could not be started (ENOENT, EACCES…). */
  error: NodeJS.ErrnoException | null;
  timedOut: boolean;
  aborted: boolean;
  overLimit: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/**
 * node:child_process directly (a plain spawn costs a fraction of a wrapper's per-call work):
 * settles once the process has exited and both pipes are closed, so output written by
 * grandchildren is kept too, unless the engine stops the group.
 */
function runProcess(file: string, args: string[], request: InvokeRequest): Promise<ProcessEnd> {
  const started = performance.now();
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        cwd: request.cwd,
        env: { ...process.env, ...request.env },
        stdio: [request.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        // Its own process group, so a timeout or interrupt can kill grandchildren too.
        detached: true,
      });
    } catch (err) {
      // spawn throws synchronously for argv it refuses outright (a NUL byte, say).
      resolve({ ...emptyEnd(), error: err as NodeJS.ErrnoException, durationMs: Math.round(performance.now() - started) });
      return;
    }
    const group = child.pid === undefined ? null : groupStopper(child.pid);
    const end = emptyEnd();
    const capture = (stream: NodeJS.ReadableStream | null, key: "stdout" | "stderr"): void => {
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => {
        if (end.overLimit) return;
        if (end[key].length + chunk.length > MAX_CAPTURE_CHARS) {
          end[key] += chunk.slice(0, MAX_CAPTURE_CHARS - end[key].length);
          end.overLimit = true;
          group?.stop();
          return;
        }
        end[key] += chunk;
      });
    };
    capture(child.stdout, "stdout");
    capture(child.stderr, "stderr");
    if (child.stdin) {
      // A tool that exits without reading its input closes the pipe; that is its business.
      child.stdin.on("error", () => {});
      child.stdin.end(request.stdin);
    }

    const timer = setTimeout(() => {
      end.timedOut = true;
      group?.stop();
    }, Math.min(Math.max(request.timeoutMs, 0), MAX_TIMER_MS));
    const onAbort = (): void => {
      end.aborted = true;
      group?.stop();
    };
    request.signal?.addEventListener("abort", onAbort, { once: true });

    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      group?.finish();
      resolve({ ...end, durationMs: Math.round(performance.now() - started) });
    };
    child.on("error", (err: NodeJS.ErrnoException) => {
      end.error = err;
      if (child.pid === undefined) settle();
    });
    child.on("close", (code, signal) => {
      end.exitCode = code;
      end.signal = signal;
      settle();
    });
  });
}

function emptyEnd(): Omit<ProcessEnd, "durationMs"> {
  return { exitCode: null, signal: null, error: null, timedOut: false, aborted: false, overLimit: false, stdout: "", stderr: "" };
}

/** SIGTERM to the group now, SIGKILL after a grace period or as soon as the process has ended. */
function groupStopper(pid: number): { stop: () => void; finish: () => void } {
  let stopping = false;
  let forceTimer: NodeJS.Timeout | undefined;
  return {
    stop() {
      if (stopping) return;
      stopping = true;
      signalGroup(pid, "SIGTERM");
      forceTimer = setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS);
    },
    finish() {
      clearTimeout(forceTimer);
      // Members that ignored SIGTERM but let go of the pipes must not outlive the call.
      if (stopping) signalGroup(pid, "SIGKILL");
    },
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every member of the group has already exited.
  }
}

function describeSpawnError(file: string, cwd: string, error: NodeJS.ErrnoException): string {
  if (!isDirectory(cwd)) return `working directory does not exist or is not a directory: ${cwd}`;
  if (error.code === "ENOENT") return `command not found: ${file}`;
  if (error.code === "EACCES") return `permission denied: ${file} is not executable`;
  return `could not start ${file}: ${error.message}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function notStarted(spawnError: string | null, aborted: boolean): InvokeResult {
  const observation = spawnError ?? "[interrupted before the tool started]";
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted,
    spawnError,
    stdout: "",
    stderr: "",
    durationMs: 0,
    observation,
    status: "ERROR",
  };
}
