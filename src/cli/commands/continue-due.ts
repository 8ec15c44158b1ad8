// `delta continue --due`: every DEFERRED run of the workspaces whose time has come, continued by its own `delta continue` (N at a time), one line each, the worst exit code.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BATCH_RESULTS_DIR_VARIABLE } from "../../store/batch-results.js";
import { EMPTY_USAGE } from "../../llm/usage.js";
import { EXIT, ENGINE_ERROR, UsageError } from "../../errors.js";
import { RunResultSchema, type RunResult } from "../../run/run-result.js";
import { listRuns, type RunSummary } from "../../store/list-runs.js";
import { terminalSafe } from "../../terminal-text.js";
import { listScopedRuns } from "../../store/locate-run.js";
import type { CliIo } from "../io.js";
import { optionalString, parseFormat, parsePositiveInt } from "../options.js";
import { runScope } from "../run-scope.js";

/** Which exit code wins when the runs end differently: an interrupt, then a refusal, a failure, a question, a deferral, a completion. */
const SEVERITY: readonly number[] = [EXIT.INTERRUPTED, EXIT.REFUSED, EXIT.FAILED, EXIT.WAITING_FOR_INPUT, EXIT.DEFERRED, EXIT.COMPLETED];

/** Options of `continue` each child gets as given: how far it may go, with what model, where, under which budget. */
const PASSED_ON: readonly [flag: string, key: string, takesValue: boolean][] = [
  ["--max-iterations", "maxIterations", true],
  ["--model", "model", true],
  ["--base-url", "baseUrl", true],
  ["--accept-endpoint", "acceptEndpoint", false],
  ["--max-cost-usd", "maxCostUsd", true],
  ["--budget-file", "budgetFile", true],
  ["--sandbox", "sandbox", true],
  ["--live", "live", false],
  ["-v", "verbose", false],
];

export async function continueDue(flags: Record<string, unknown>, io: CliIo): Promise<number> {
  if (flags.runId !== undefined || flags.last || flags.message !== undefined || flags.messageFile !== undefined) {
    throw new UsageError("--due continues every deferred run that is due, each as it stands: give no --run-id, --last or message with it. To continue one run, leave out --due.");
  }
  const format = parseFormat(flags.format, ["text", "json"]);
  const jobs = parsePositiveInt("-j/--jobs", flags.jobs, 1);
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const now = Date.now();
  const listed = (await dueRuns(flags, now, warn)).sort((a, b) => (a.deferred?.resume_after ?? "").localeCompare(b.deferred?.resume_after ?? ""));
  // --live sends a batched call live: every such run goes on. Else a batched run goes on only once its batch has ended,
  // the batch's results read here once for all of its runs.
  const handed = !flags.live && listed.some((run) => run.deferred?.reason === "MODEL_BATCHED") ? mkdtempSync(join(tmpdir(), "delta-batch-results-")) : null;
  try {
    return await continueListed(listed, { flags, format, jobs }, io, handed);
  } finally {
    if (handed !== null) rmSync(handed, { recursive: true, force: true });
  }
}

/** The listed due runs continued, N at a time, but those whose call waits in a batch that has not ended; `handed`: where their batches' results are handed to them. */
async function continueListed(listed: RunSummary[], given: { flags: Record<string, unknown>; format: string; jobs: number }, io: CliIo, handed: string | null): Promise<number> {
  const { flags, format, jobs } = given;
  const waiting = handed === null ? new Set<RunSummary>() : await stillBatched(listed, io, handed);
  const due = listed.filter((run) => !waiting.has(run));
  if (waiting.size > 0) io.err(`${waiting.size} deferred run${waiting.size === 1 ? " waits" : "s wait"} in a batch not yet submitted or not yet ended: left DEFERRED (\`delta batch status\` says which)\n`);
  if (due.length === 0) {
    if (waiting.size > 0) return EXIT.DEFERRED;
    io.err("No deferred run is due.\n");
    return EXIT.COMPLETED;
  }
  io.err(`Continuing ${due.length} deferred run${due.length === 1 ? "" : "s"}, ${Math.min(jobs, due.length)} at a time\n`);
  const passed = passedOn(flags);
  const codes: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < due.length; index = next++) {
      const run = due[index]!;
      const { code, result } = await continueOne(run, passed, io, handed);
      codes.push(code);
      io.out(format === "json" ? `${JSON.stringify(result)}\n` : `${terminalSafe(summaryLine(run, code, result))}\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, due.length) }, worker));
  if (waiting.size > 0) codes.push(EXIT.DEFERRED);
  return SEVERITY.find((code) => codes.includes(code)) ?? codes.find((code) => !SEVERITY.includes(code)) ?? EXIT.COMPLETED;
}

/**
 * The due runs whose model call waits in a batch that has not ended (or was never submitted, or whose submission is in
 * doubt): each batch is asked once, however many runs wait in it; a batch that cannot be asked leaves its runs DEFERRED.
 */
async function stillBatched(runs: readonly RunSummary[], io: CliIo, handed: string): Promise<Set<RunSummary>> {
  const batched = runs.filter((run) => run.deferred?.reason === "MODEL_BATCHED");
  if (batched.length === 0) return new Set();
  const { askBatches, handResults, waitingRuns } = await import("../../run/batch-fleet.js");
  const byKey = new Map(batched.map((run) => [`${run.work_dir}\0${run.run_id}`, run]));
  const waiting = waitingRuns([...new Set(batched.map((run) => run.work_dir))], (line) => io.err(`${terminalSafe(line)}\n`)).filter((run) => byKey.has(`${run.workDir}\0${run.runId}`));
  const left = new Set<RunSummary>();
  for (const run of waiting) if (!run.batched.submitted?.batch_id) left.add(byKey.get(`${run.workDir}\0${run.runId}`)!);
  const batches = await askBatches(waiting, { progress: (line) => io.err(`${terminalSafe(line)}\n`) });
  for (const [batchId, entry] of batches) {
    if (entry.error) io.err(`[warning] batch ${batchId}: ${terminalSafe(entry.error)}\n`);
    // A batch that could not be asked is asked again next time: its runs stay as they are.
    if (entry.state !== null && entry.state.ended) continue;
    for (const run of entry.runs) left.add(byKey.get(`${run.workDir}\0${run.runId}`)!);
  }
  await handResults(batches, handed, { progress: (line) => io.err(`${terminalSafe(line)}\n`) });
  return left;
}

/** The due runs of every workspace named by -w (given once or more), or of the agent's workspaces (--agent), or of the place `run` puts runs. */
async function dueRuns(flags: Record<string, unknown>, now: number, warn: (line: string) => void): Promise<RunSummary[]> {
  const given = flags.workDir;
  if (Array.isArray(given)) {
    if (flags.agent !== undefined) throw new UsageError("Give -w <workspace> (once or more) or --agent <dir>, not both.");
    return given.map((dir) => resolve(String(dir))).flatMap((workDir) => listRuns(workDir, { dueAt: now }, warn));
  }
  return listScopedRuns(await runScope(flags), { dueAt: now }, warn);
}

function passedOn(flags: Record<string, unknown>): string[] {
  return PASSED_ON.flatMap(([flag, key, takesValue]) => {
    const value = flags[key];
    if (value === undefined || value === false) return [];
    if (!takesValue) return [flag];
    return [flag, optionalString(flag, value) ?? ""];
  });
}

/** One run continued by a `delta continue` of its own (its own lease, its own process): its exit code and RunResult; its stderr, each line named by the run. */
function continueOne(run: RunSummary, passed: readonly string[], io: CliIo, handed: string | null): Promise<{ code: number; result: RunResult }> {
  const args = [process.argv[1]!, "continue", "--run-id", run.run_id, "-w", run.work_dir, "--format", "json", ...passed];
  const started = new Date();
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], ...(handed === null ? {} : { env: { ...process.env, [BATCH_RESULTS_DIR_VARIABLE]: handed } }) });
    let stdout = "";
    let partial = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      for (const line of lines) io.err(`[${run.run_id}] ${line}\n`);
    });
    const finish = (code: number, why: string): void => {
      if (partial !== "") io.err(`[${run.run_id}] ${partial}\n`);
      done({ code, result: parsedResult(stdout) ?? noResult(run, started, why) });
    };
    child.on("error", (err) => finish(EXIT.FAILED, `could not start delta: ${err.message}`));
    child.on("close", (code, signal) => finish(code ?? EXIT.FAILED, `the delta process ended (${signal ?? `exit ${code}`}) without a RunResult`));
  });
}

function parsedResult(stdout: string): RunResult | null {
  try {
    const parsed = RunResultSchema.safeParse(JSON.parse(stdout));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function noResult(run: RunSummary, started: Date, message: string): RunResult {
  const now = new Date();
  return {
    schema_version: "2.0",
    run_id: run.run_id,
    trace_id: null,
    status: "FAILED",
    error: { type: ENGINE_ERROR, message },
    metrics: { iterations: run.iterations, duration_ms: now.getTime() - started.getTime(), start_time: started.toISOString(), end_time: now.toISOString(), usage: EMPTY_USAGE },
    metadata: { agent_name: run.agent_name, workspace_path: run.work_dir },
  };
}

/** `<run id>  <status>  exit <code>` and what followed: the deferral's reason and time, or the error. */
function summaryLine(run: RunSummary, code: number, result: RunResult): string {
  const after = result.deferred
    ? `  ${result.deferred.reason}${result.deferred.resume_after === null ? "" : ` until ${result.deferred.resume_after}`}`
    : result.error
      ? `  ${result.error.type}: ${result.error.message.split("\n")[0]}`
      : "";
  return `${run.run_id}  ${result.status}  exit ${code}  ${run.work_dir}${after}`;
}
