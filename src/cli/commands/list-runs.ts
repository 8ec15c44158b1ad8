// `delta list-runs`: the runs of a workspace, or of every workspace of an agent, as text, JSON or bare ids (newest first).
import { terminalSafe } from "../../terminal-text.js";
import { basename } from "node:path";
import shellQuote from "shell-quote";
import { indexedRunsThatExist, listScopedLeftovers, listScopedRuns } from "../../store/locate-run.js";
import { leftoverRun } from "../../store/run-dir.js";
import { whereRunsAre } from "../run-query.js";
import { applyFilter, type RunSummary } from "../../store/list-runs.js";
import { checkLiveness } from "../../store/lease/liveness-check.js";
import { humanBytes } from "../../byte-size.js";
import { runSize, type RunSize } from "../../store/run-size.js";
import type { CliIo } from "../io.js";
import { parseFormat, parseStatus } from "../options.js";
import { runScope } from "../run-scope.js";

export async function listRunsCommand(flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format, ["text", "json", "raw"]);
  const scope = await runScope(flags);
  const filter = { resumable: Boolean(flags.resumable), status: parseStatus(flags.status), first: Boolean(flags.first), ...(flags.due ? { dueAt: Date.now() } : {}) };
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  // --resumable must tell a run stranded on a dead host from one a live host is writing, so it watches them too (only
  // when there are any). Liveness is judged before the filter, so it keeps only the runs whose holder was seen dead.
  const check = Boolean(flags.checkLiveness) || filter.resumable;
  const listed = check ? applyFilter(await checkLiveness(listScopedRuns(scope, {}, warn)), filter) : listScopedRuns(scope, filter, warn);
  // --size: what each run folder holds, so a fleet's disk can be looked after (delta prune removes).
  const runs: (RunSummary & { size?: RunSize })[] = flags.size ? listed.map((run) => ({ ...run, size: runSize(run.work_dir, run.run_id) })) : listed;
  for (const { workDir, runId } of listScopedLeftovers(scope)) warn(leftoverRun(workDir, runId).message);
  const showWorkspace = "agentHome" in scope;
  switch (format) {
    case "json":
      io.data(`${JSON.stringify(runs, null, 2)}\n`);
      break;
    case "raw":
      io.out(runs.map((run) => `${run.run_id}\n`).join(""));
      break;
    default:
      io.out(runs.length === 0 ? "" : textTable(runs, showWorkspace));
      if (runs.length === 0) io.err(`No runs found in ${whereRunsAre(scope)}\n${elsewhere(flags)}`);
      break;
  }
  return 0;
}

/** Where else runs are: with neither -w nor --agent, the workspaces of the user's most recent runs (the run index), each with the command that lists it. */
function elsewhere(flags: Record<string, unknown>): string {
  if (flags.workDir !== undefined || flags.agent !== undefined) return "A run started with --agent <dir> is listed with the same --agent, one started with -w <dir> with the same -w.\n";
  const workDirs = [...new Set(indexedRunsThatExist(RECENT_RUNS).map((run) => run.workDir))];
  if (workDirs.length === 0) return "A run started with --agent <dir> is listed with the same --agent, one started with -w <dir> with the same -w.\n";
  return `Your most recent runs are in:\n${workDirs.map((workDir) => `  ${workDir}    delta list-runs -w ${shellQuote.quote([workDir])}\n`).join("")}`;
}

/** How many of the user's most recent runs list-runs points at when there are none here. */
const RECENT_RUNS = 5;

/** A header, then one row per run; every column as wide as its widest cell, the task last and clipped. With --size, what each run holds. */
function textTable(runs: Array<RunSummary & { size?: RunSize }>, showWorkspace: boolean): string {
  const sized = runs.some((run) => run.size !== undefined);
  const sizeCells = (run: RunSummary & { size?: RunSize }): string[] =>
    sized ? (run.size ? [humanBytes(run.size.total_bytes), humanBytes(run.size.journal_bytes), humanBytes(run.size.io_bytes)] : ["?", "?", "?"]) : [];
  const rows = runs.map((run) => [...(showWorkspace ? [basename(run.work_dir)] : []), run.run_id, statusOf(run), String(run.iterations), ago(run.last_updated), ...sizeCells(run), clipTask(run.task_summary)]);
  const header = [...(showWorkspace ? ["WORKSPACE"] : []), "RUN ID", "STATUS", "ITER", "UPDATED", ...(sized ? ["SIZE", "JOURNAL", "IO"] : []), "TASK"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]): string => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ").trimEnd();
  return `${[header, ...rows].map(line).join("\n")}\n`;
}

function statusOf(run: RunSummary): string {
  if (run.orphaned) return "RUNNING (orphaned)";
  if (run.status === "DEFERRED" && run.deferred) return `DEFERRED (${run.deferred.reason}, ${run.deferred.resume_after === null ? "due now" : `due ${run.deferred.resume_after}`})`;
  return run.holder?.state === "unchecked" ? `RUNNING (on ${run.holder.hostname ?? "another host"}, not checked)` : run.status;
}

const TASK_WIDTH = 60;

/** The task on one line, its control characters visible, clipped to TASK_WIDTH. */
function clipTask(task: string): string {
  const flat = terminalSafe(task.replace(/\s+/g, " ").trim());
  return flat.length > TASK_WIDTH ? `${flat.slice(0, TASK_WIDTH - 1)}…` : flat;
}

function ago(iso: string): string {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86_400)}d ago`;
}
