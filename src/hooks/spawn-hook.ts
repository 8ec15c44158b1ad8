// Runs one hook process: argv without a shell, JSON on stdin, a timeout that kills its whole process group.
import { existsSync } from "node:fs";

/** Hook output beyond this is a failure, not something to keep in memory or in io/hooks/. */
export const HOOK_OUTPUT_MAX_BYTES = 16 * 1024 * 1024;

export interface HookSpawnRequest {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string;
  timeoutMs: number;
  /** When it aborts (the run is interrupted), the hook's whole process group is killed at once. */
  signal?: AbortSignal | undefined;
}

/** Flat facts about one execution, in the manner of execa's result. */
export interface HookProcessResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** Why the process could not start (command not found, not executable), or null. */
  spawnError: string | null;
  outputTooLarge: boolean;
  /** Stopped, or never started, because `signal` aborted. */
  interrupted?: boolean;
}

export async function spawnHook(request: HookSpawnRequest): Promise<HookProcessResult> {
  const [file, ...args] = request.argv;
  if (file === undefined || file === "") {
    return failedToStart("empty command");
  }
  if (request.signal?.aborted) return { ...failedToStart("not started: the run is being interrupted"), interrupted: true };
  // Loaded on first use: most runs define no hooks, and execa is a large part of start-up otherwise.
  const { execa } = await import("execa");
  const deadline = new AbortController();
  let timedOut = false;
  let interrupted = false;
  // Start counting before spawning so slow starts count against the timeout too.
  const startedAt = performance.now();
  let subprocess;
  try {
    subprocess = execa(file, args, {
      cwd: request.cwd,
      env: request.env,
      extendEnv: false,
      input: request.stdin,
      // Its own process group, so a timeout can kill the children a script started as well.
      detached: true,
      cancelSignal: deadline.signal,
      killSignal: "SIGKILL",
      maxBuffer: HOOK_OUTPUT_MAX_BYTES,
      stripFinalNewline: false,
      reject: false,
    });
  } catch (error) {
    // execa refuses some argv (a NUL byte, say) before spawning by throwing instead of returning a result.
    return failedToStart(`could not start ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  deadline.signal.addEventListener("abort", () => killProcessGroup(subprocess.pid));
  const timer = setTimeout(() => {
    timedOut = true;
    deadline.abort();
  }, request.timeoutMs);
  const onInterrupt = (): void => {
    interrupted = true;
    deadline.abort();
  };
  request.signal?.addEventListener("abort", onInterrupt, { once: true });
  try {
    const result = await subprocess;
    const spawnError = result.exitCode === undefined && result.signal === undefined && !timedOut && !interrupted ? describeSpawnError(result.cause, file, request.cwd) : null;
    return {
      stdout: textOf(result.stdout),
      stderr: textOf(result.stderr),
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      timedOut,
      durationMs: Math.round(performance.now() - startedAt),
      spawnError,
      outputTooLarge: result.isMaxBuffer,
      interrupted,
    };
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onInterrupt);
  }
}

function killProcessGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is already gone: nothing left to kill.
  }
}

function describeSpawnError(cause: unknown, file: string, cwd: string): string {
  const code = cause instanceof Error && "code" in cause ? cause.code : undefined;
  // spawn reports a missing cwd as ENOENT too, which would otherwise blame the command.
  if (code === "ENOENT" && !existsSync(cwd)) return `working directory not found: ${cwd}`;
  if (code === "ENOENT") return `command not found: ${file}`;
  if (code === "EACCES") return `permission denied (not executable?): ${file}`;
  return `could not start ${file}: ${cause instanceof Error ? cause.message : String(cause)}`;
}

function failedToStart(reason: string): HookProcessResult {
  return { stdout: "", stderr: "", exitCode: null, signal: null, timedOut: false, durationMs: 0, spawnError: reason, outputTooLarge: false };
}

function textOf(output: unknown): string {
  return typeof output === "string" ? output : "";
}
