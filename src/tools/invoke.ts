// Runs one tool process: no shell, its own process group, bounded time, complete output kept.
import { statSync } from "node:fs";
import { execa, type ResultPromise } from "execa";
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

  const subprocess = startProcess(file, args, request);
  if (typeof subprocess === "string") return notStarted(subprocess, false);

  // execa's own timeout and cancelSignal kill only the direct child, and then wait for pipes
  // that grandchildren still hold; so the engine stops the whole group itself.
  const group = subprocess.pid === undefined ? null : groupStopper(subprocess.pid);
  let timedOut = false;
  let aborted = false;
  const timer = setTimeout(() => {
    timedOut = true;
    group?.stop();
  }, Math.min(Math.max(request.timeoutMs, 0), MAX_TIMER_MS));
  const onAbort = (): void => {
    aborted = true;
    group?.stop();
  };
  request.signal?.addEventListener("abort", onAbort, { once: true });

  const result = await subprocess;
  clearTimeout(timer);
  request.signal?.removeEventListener("abort", onAbort);
  if (result.isMaxBuffer) group?.stop();
  group?.finish();

  const spawnError = result.failed && result.exitCode === undefined && result.signal === undefined
    ? describeSpawnError(file, request.cwd, result.code, result.originalMessage)
    : null;
  const stoppedByEngine = timedOut || aborted || result.isMaxBuffer;
  const signal = result.signal ?? null;
  const stdout = result.stdout ?? "";
  const stderr = result.stderr ?? "";
  const exitCode = result.exitCode ?? null;
  const observation = formatObservation(
    {
      stdout,
      stderr,
      timedOut,
      timeoutMs: request.timeoutMs,
      aborted,
      spawnError,
      signal: stoppedByEngine ? null : signal,
      captureLimit: result.isMaxBuffer ? MAX_CAPTURE_CHARS : null,
    },
    request.maxObservationBytes ?? DEFAULT_MAX_OBSERVATION_BYTES,
  );
  const status: InvokeStatus = spawnError !== null || stoppedByEngine ? "ERROR" : exitCode === 0 ? "SUCCESS" : "FAILED";
  return { exitCode, signal, timedOut, aborted, spawnError, stdout, stderr, durationMs: Math.round(result.durationMs), observation, status };
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

function describeSpawnError(file: string, cwd: string, code: string | undefined, message: string | undefined): string {
  if (!isDirectory(cwd)) return `working directory does not exist or is not a directory: ${cwd}`;
  if (code === "ENOENT") return `command not found: ${file}`;
  if (code === "EACCES") return `permission denied: ${file} is not executable`;
  return `could not start ${file}: ${message ?? code ?? "unknown error"}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The running process, or why it could not start: Node refuses some argv outright (a NUL byte in an argument). */
function startProcess(file: string, args: string[], request: InvokeRequest): ResultPromise<{ reject: false; encoding: "utf8" }> | string {
  try {
    return execa(file, args, {
      cwd: request.cwd,
      env: request.env,
      extendEnv: true,
      ...(request.stdin === undefined ? { stdin: "ignore" as const } : { input: request.stdin }),
      // Its own process group, so a timeout or interrupt can kill grandchildren too.
      detached: true,
      forceKillAfterDelay: KILL_GRACE_MS,
      reject: false,
      stripFinalNewline: false,
      maxBuffer: MAX_CAPTURE_CHARS,
      encoding: "utf8",
    });
  } catch (err) {
    return `[the tool could not be started: ${err instanceof Error ? err.message : String(err)}]`;
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
