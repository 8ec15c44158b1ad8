// Runs one process to its end: argv without a shell, its own process group, a timeout and an abort that stop the group, bounded output.
import { performance } from "node:perf_hooks";
import { createCapture, type CaptureLimit } from "./capture.js";
import { KILL_GRACE_MS, processGroup, spawnGroupLeader, type ProcessGroup } from "./group.js";
import type { SandboxBox } from "./sandbox/argv.js";
import { spawnFailure, type SpawnFailure } from "./spawn-failure.js";

export interface ProcessRequest {
  argv: readonly string[];
  cwd: string;
  /** The process's whole environment: nothing is inherited from the engine's. */
  env: Readonly<Record<string, string>>;
  /** Run inside this box (bubblewrap); group kill, timeout and capture work as without. */
  sandbox?: SandboxBox | undefined;
  /** Written to stdin, which is then closed; without it stdin is closed from the start, so a reader never waits. */
  stdin?: string | undefined;
  timeoutMs: number;
  /** Aborting it stops the process group as the timeout does. */
  signal?: AbortSignal | undefined;
  /** Between SIGTERM and SIGKILL to the group; 0 sends SIGKILL at once. Default KILL_GRACE_MS. */
  killGraceMs?: number;
  /** Per stream, stdout and stderr alike. */
  capture: CaptureLimit;
  /** Told the process's pid, which is also its group's id, as soon as it is spawned. */
  onSpawn?: (pid: number) => void;
}

/**
 * Flat facts about one execution, in the manner of execa's result: the one shape every caller
 * reports a process by (a tool's run adds its observation and status; a hook's decision reads it).
 * `SpawnError`: the failure to start as the runner found it, or the sentence a caller made of it.
 */
export interface ProcessResult<SpawnError = SpawnFailure> {
  exitCode: number | null;
  /** The signal that ended the process, whoever sent it. */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** `signal` aborted while the process ran, or before it could start (then nothing ran). */
  aborted: boolean;
  /** A stream went over a `head` capture limit, so the group was stopped. */
  overLimit: boolean;
  /** Something the process started (a daemon) kept stdout or stderr open after it ended, so the runner stopped reading. */
  outputLeftOpen: boolean;
  spawnError: SpawnError | null;
  durationMs: number;
  stdout: string;
  stderr: string;
}

/**
 * Once the process has exited (or been stopped), how long the pipes may stay quiet before the runner
 * stops waiting for them to close. A child that left the process group (`setsid`) and inherited
 * stdout would otherwise hold the engine forever; output that still flows keeps the wait going.
 */
export const PIPE_IDLE_MS = 300;

// setTimeout fires at once for delays that do not fit in a signed 32-bit integer.
const MAX_TIMER_MS = 2_147_483_647;

export function runProcess(request: ProcessRequest): Promise<ProcessResult> {
  // Start counting before spawning, so a slow start counts against the duration too.
  const started = performance.now();
  if (request.signal?.aborted) return Promise.resolve(notRun({ aborted: true }));
  const child = spawnGroupLeader(request.argv, { cwd: request.cwd, env: request.env, sandbox: request.sandbox, stdin: request.stdin === undefined ? "ignore" : "pipe" });
  if ("reason" in child) return Promise.resolve(notRun({ spawnError: child, durationMs: elapsed(started) }));
  if (child.pid !== undefined) request.onSpawn?.(child.pid);

  return new Promise((resolve) => {
    const facts = {
      exitCode: null as number | null,
      signal: null as NodeJS.Signals | null,
      timedOut: false,
      aborted: false,
      overLimit: false,
      outputLeftOpen: false,
      spawnError: null as SpawnFailure | null,
    };
    const killGraceMs = request.killGraceMs ?? KILL_GRACE_MS;
    const group: ProcessGroup | null = child.pid === undefined ? null : processGroup(child.pid, killGraceMs);
    let exited = false;
    let pipeTimer: NodeJS.Timeout | undefined;
    let forceTimer: NodeJS.Timeout | undefined;
    const stopWaiting = (): void => {
      facts.outputLeftOpen = true;
      child.stdout?.destroy();
      child.stderr?.destroy();
      settle();
    };
    const waitForPipes = (): void => {
      clearTimeout(pipeTimer);
      pipeTimer = setTimeout(stopWaiting, PIPE_IDLE_MS);
    };
    const stop = (): void => {
      if (group === null || group.stopping) return;
      group.stop();
      // A member outside the group (setsid) may hold the pipes for ever: settle once the grace is over regardless.
      forceTimer = setTimeout(stopWaiting, killGraceMs + PIPE_IDLE_MS);
    };

    const stdout = createCapture(request.capture);
    const stderr = createCapture(request.capture);
    const read = (stream: NodeJS.ReadableStream | null, capture: typeof stdout): void => {
      stream?.on("data", (chunk: Buffer) => {
        if (exited) waitForPipes();
        if (capture.push(chunk)) {
          facts.overLimit = true;
          stop();
        }
      });
    };
    read(child.stdout, stdout);
    read(child.stderr, stderr);
    if (child.stdin) {
      // A process that exits without reading its input closes the pipe; that is its business.
      child.stdin.on("error", () => {});
      child.stdin.end(request.stdin);
    }

    const timer = setTimeout(() => {
      facts.timedOut = true;
      stop();
    }, Math.min(Math.max(request.timeoutMs, 0), MAX_TIMER_MS));
    const onAbort = (): void => {
      facts.aborted = true;
      stop();
    };
    request.signal?.addEventListener("abort", onAbort, { once: true });

    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(pipeTimer);
      clearTimeout(forceTimer);
      request.signal?.removeEventListener("abort", onAbort);
      group?.release();
      resolve({ ...facts, durationMs: elapsed(started), stdout: stdout.text(), stderr: stderr.text() });
    };
    child.on("error", (error) => {
      if (child.pid !== undefined) return;
      facts.spawnError = spawnFailure(request.argv[0] ?? "", request.cwd, error);
      settle();
    });
    child.on("exit", (code, signal) => {
      facts.exitCode = code;
      facts.signal = signal;
      exited = true;
      waitForPipes();
    });
    // Exited, and both pipes closed: what children it left behind wrote in the meantime is kept too.
    child.on("close", settle);
  });
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

function notRun(facts: Partial<ProcessResult>): ProcessResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: false,
    overLimit: false,
    outputLeftOpen: false,
    spawnError: null,
    durationMs: 0,
    stdout: "",
    stderr: "",
    ...facts,
  };
}
