// The runs `delta mcp serve` started: each a child `delta` process in the server's workspace, started and stopped through the process runner, followed to its RunResult.
import { ENGINE_ERROR, RunRefusedError, errorMessage } from "../errors.js";
import { EMPTY_USAGE } from "../llm/usage.js";
import { startProcess, type StartedProcess } from "../process/start-process.js";
import { RunResultSchema, type RunResult } from "../run/run-result.js";
import type { RunId } from "../store/run-id.js";

/** The variable holding the HTTP bearer token: never passed on to the runs, whose tools could read it. */
export const TOKEN_VARIABLE = "DELTA_MCP_TOKEN";

interface ChildLaunch {
  /** Node, and the `delta` launcher this server was started from. */
  execPath: string;
  script: string;
  agentHome: string;
  workDir: string;
  /** How long a child has to end after SIGTERM before it is killed (kill -9 leaves a run resumable too). */
  termGraceMs: number;
  /** Where the children's stderr goes (the server's own stderr). */
  log: (text: string) => void;
}

interface ChildRunRequest {
  kind: "run" | "continue";
  runId: RunId;
  /** The task of a run; the instruction or answer of a continue (none: resume as it stands). */
  message?: string;
  /** The client that asked: its runs are interrupted when it disconnects. */
  owner: string;
}

export interface ChildRun {
  readonly runId: RunId;
  readonly owner: string;
  /** Model calls made so far by this invocation. */
  iterations: number;
  /** Set once the child has exited. */
  result: RunResult | null;
  readonly done: Promise<RunResult>;
  /** Called with the iteration count at each model reply; returns the unsubscribe. */
  onIteration(listener: (iteration: number) => void): () => void;
}

export const DEFAULT_TERM_GRACE_SECONDS = 10;
const STDERR_TAIL = 4096;

/** A child run and its process, once the process runner has started it (rejected when it could not be). */
type Followed = ChildRun & { process: Promise<StartedProcess> };

export class ChildRuns {
  private readonly runs = new Map<RunId, Followed>();

  constructor(private readonly launch: ChildLaunch) {}

  /** Starts `delta run` or `delta continue` for this run id through the process runner; refused while this server still runs it. */
  start(request: ChildRunRequest): ChildRun {
    const current = this.runs.get(request.runId);
    if (current !== undefined && current.result === null) {
      throw new RunRefusedError(`run_id: run ${request.runId} is still running; wait for it with the status or result tool`);
    }
    const { execPath, script, agentHome, workDir, termGraceMs } = this.launch;
    const common = ["-w", workDir, "--run-id", request.runId, "--format", "stream-json", ...(request.message === undefined ? [] : ["-m", "-"])];
    const args = request.kind === "run" ? [script, "run", "--agent", agentHome, "-y", ...common] : [script, "continue", ...common];
    const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[0] !== TOKEN_VARIABLE));
    // In a process group of its own, stopped as a group: SIGTERM, then SIGKILL once the grace is over.
    const started = startProcess({ argv: [execPath, ...args], cwd: workDir, env, killGraceMs: termGraceMs });
    const run = follow(request, started, this.launch);
    this.runs.set(request.runId, run);
    return run;
  }

  /** The run this server started (or continued) last under this id, if any. */
  get(runId: RunId): ChildRun | undefined {
    return this.runs.get(runId);
  }

  /** SIGTERM to the running runs of one client (or of all): each ends INTERRUPTED (130) and stays resumable. */
  async interrupt(owner?: string): Promise<void> {
    const running = [...this.runs.values()].filter((run) => run.result === null && (owner === undefined || run.owner === owner));
    await Promise.all(
      running.map(async (run) => {
        // The process runner sends SIGKILL when the grace is over; this only says so.
        const told = setTimeout(() => {
          this.launch.log(`delta mcp serve: run ${run.runId} did not end within ${this.launch.termGraceMs / 1000} s of SIGTERM: killed (SIGKILL); it stays resumable with delta continue\n`);
        }, this.launch.termGraceMs);
        try {
          await (await run.process.catch(() => null))?.stopGroup();
          await run.done;
        } finally {
          clearTimeout(told);
        }
      }),
    );
  }
}

/** Follows a child from its start to its RunResult: its stdout's journal lines counted as they come, the last one read as the RunResult. */
function follow(request: ChildRunRequest, started: Promise<StartedProcess>, { workDir, log }: Pick<ChildLaunch, "workDir" | "log">): Followed {
  const startedAt = new Date();
  const listeners = new Set<(iteration: number) => void>();
  let stdout = "";
  let lastLine = "";
  let stderrTail = "";
  const countLine = (line: string): void => {
    lastLine = line;
    // Journal lines come first, one per event: a THOUGHT is one model reply.
    if (eventTypeOf(line) !== "THOUGHT") return;
    run.iterations += 1;
    for (const listener of listeners) listener(run.iterations);
  };
  const ended = (message: string): RunResult => failure(request.runId, workDir, startedAt, run.iterations, message);
  const run: Followed = {
    runId: request.runId,
    owner: request.owner,
    process: started,
    iterations: 0,
    result: null,
    done: started.then(
      ({ child, stopGroup }) =>
        new Promise<RunResult>((resolve) => {
          child.stdin.end(request.message);
          child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
            stdout += chunk;
            const lines = stdout.split("\n");
            stdout = lines.pop()!;
            for (const line of lines) if (line.trim() !== "") countLine(line);
          });
          child.stdout.on("end", () => {
            if (stdout.trim() !== "") lastLine = stdout;
          });
          child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
            log(chunk);
            stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL);
          });
          child.on("close", (code, signal) => {
            resolve(parseResult(lastLine) ?? ended(`the delta process ended (${signal ?? `exit ${code}`}) without a RunResult: ${stderrTail.trim()}`));
            // Its group is done with: anything left in it goes, and the runner forgets it.
            void stopGroup();
          });
        }),
      (err: unknown) => ended(`could not start delta: ${errorMessage(err)}`),
    ).then((result) => (run.result = result)),
    onIteration(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return run;
}

/** The `type` of a journal line the child printed, read from the line as JSON; undefined for a line that is no event. */
function eventTypeOf(line: string): unknown {
  try {
    return (JSON.parse(line) as { type?: unknown } | null)?.type;
  } catch {
    return undefined;
  }
}

/** The child's last line, when it is a RunResult: validated, and kept as the child wrote it. */
function parseResult(line: string): RunResult | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // Not JSON: the child died mid-line.
    return null;
  }
  return RunResultSchema.safeParse(value).success ? (value as RunResult) : null;
}

/** The RunResult of a child that gave none: FAILED, with what this server saw of it. */
function failure(runId: string, workDir: string, started: Date, iterations: number, message: string): RunResult {
  const now = new Date();
  return {
    schema_version: "2.0",
    run_id: runId,
    trace_id: null,
    status: "FAILED",
    error: { type: ENGINE_ERROR, message },
    metrics: { iterations, duration_ms: now.getTime() - started.getTime(), start_time: started.toISOString(), end_time: now.toISOString(), usage: EMPTY_USAGE },
    metadata: { agent_name: null, workspace_path: workDir },
  };
}
