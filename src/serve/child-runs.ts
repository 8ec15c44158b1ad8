// The runs `delta mcp serve` started: each a child `delta` process in the server's workspace, followed to its RunResult, and stopped with SIGTERM when its client goes.
import { spawn, type ChildProcess } from "node:child_process";
import { ENGINE_ERROR, RunRefusedError } from "../errors.js";
import { EMPTY_USAGE } from "../llm/usage.js";
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

export class ChildRuns {
  private readonly runs = new Map<RunId, ChildRun & { child: ChildProcess }>();

  constructor(private readonly launch: ChildLaunch) {}

  /** Starts `delta run` or `delta continue` for this run id; refused while this server still runs it. */
  start(request: ChildRunRequest): ChildRun {
    const current = this.runs.get(request.runId);
    if (current !== undefined && current.result === null) {
      throw new RunRefusedError(`run_id: run ${request.runId} is still running; wait for it with the status or result tool`);
    }
    const { execPath, script, agentHome, workDir } = this.launch;
    const common = ["-w", workDir, "--run-id", request.runId, "--format", "stream-json", ...(request.message === undefined ? [] : ["-m", "-"])];
    const args = request.kind === "run" ? [script, "run", "--agent", agentHome, "-y", ...common] : [script, "continue", ...common];
    const env = { ...process.env };
    delete env[TOKEN_VARIABLE];
    const child = spawn(execPath, args, { cwd: workDir, env, stdio: [request.message === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    child.stdin?.end(request.message);
    const run = follow(request, child, this.launch);
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
        run.child.kill("SIGTERM");
        const killer = setTimeout(() => {
          this.launch.log(`delta mcp serve: run ${run.runId} did not end within ${this.launch.termGraceMs / 1000} s of SIGTERM: killed (SIGKILL); it stays resumable with delta continue\n`);
          run.child.kill("SIGKILL");
        }, this.launch.termGraceMs);
        await run.done;
        clearTimeout(killer);
      }),
    );
  }
}

function follow(request: ChildRunRequest, child: ChildProcess, { workDir, log }: Pick<ChildLaunch, "workDir" | "log">): ChildRun & { child: ChildProcess } {
  const started = new Date();
  const listeners = new Set<(iteration: number) => void>();
  let stdout = "";
  let lastLine = "";
  let stderrTail = "";
  const run: ChildRun & { child: ChildProcess } = {
    runId: request.runId,
    owner: request.owner,
    child,
    iterations: 0,
    result: null,
    done: new Promise<RunResult>((resolve) => {
      child.on("close", (code, signal) => {
        run.result = parseResult(lastLine) ?? failure(request.runId, workDir, started, run.iterations, `the delta process ended (${signal ?? `exit ${code}`}) without a RunResult: ${stderrTail.trim()}`);
        resolve(run.result);
      });
      child.on("error", (err) => {
        run.result = failure(request.runId, workDir, started, run.iterations, `could not start delta: ${err.message}`);
        resolve(run.result);
      });
    }),
    onIteration(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    const lines = stdout.split("\n");
    stdout = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === "") continue;
      lastLine = line;
      // Journal lines come first, one per event; a THOUGHT is one model reply.
      if (line.includes('"type":"THOUGHT"')) {
        run.iterations += 1;
        for (const listener of listeners) listener(run.iterations);
      }
    }
  });
  child.stdout!.on("end", () => {
    if (stdout.trim() !== "") lastLine = stdout;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    log(chunk);
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL);
  });
  return run;
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
