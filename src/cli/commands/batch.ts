// `delta batch submit|status|cancel`: the model calls of a workspace's batched runs sent in batches, counted by state and batch, or their batches cancelled.
import { resolve } from "node:path";
import { EXIT, UsageError } from "../../errors.js";
import { askBatches, submitWorkspaces, waitingRuns, type WaitingRun } from "../../run/batch-fleet.js";
import { scopeWorkspaces } from "../../store/locate-run.js";
import { terminalSafe } from "../../terminal-text.js";
import type { CliIo } from "../io.js";
import { parseFormat } from "../options.js";
import { runScope } from "../run-scope.js";

export async function batchCommand(action: "submit" | "status" | "cancel", flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format, ["text", "json"]);
  if (flags.resubmit && action !== "submit") throw new UsageError("--resubmit goes with batch submit.");
  const workDirs = await workspaces(flags);
  const progress = (line: string): void => io.err(`${terminalSafe(line)}\n`);
  if (action === "submit") {
    const report = await submitWorkspaces(workDirs, { progress, resubmit: Boolean(flags.resubmit) });
    for (const left of report.notSent) progress(`[warning] run ${left.runId}: not sent: ${left.why}`);
    const sent = report.batches.reduce((sum, batch) => sum + batch.calls, 0);
    if (format === "json") io.out(`${JSON.stringify({ batches: report.batches.map((batch) => ({ batch_id: batch.batchId, calls: batch.calls, found_again: batch.found })), not_sent: report.notSent.map((left) => ({ run_id: left.runId, custom_id: left.customId, why: left.why })), skipped: report.skipped })}\n`);
    else io.out(`${sent === 0 && report.notSent.length === 0 ? "No queued model call to submit.\n" : `${sent} call${sent === 1 ? "" : "s"} in ${report.batches.length} batch${report.batches.length === 1 ? "" : "es"}${report.notSent.length > 0 ? `; ${report.notSent.length} not sent (see above)` : ""}\n`}`);
    // A call left in doubt needs a person's decision: not a success.
    return report.notSent.length > 0 ? EXIT.FAILED : EXIT.COMPLETED;
  }
  const runs = waitingRuns(workDirs, progress);
  const batches = await askBatches(runs, { progress, cancel: action === "cancel" });
  const queued = runs.filter((run) => run.batched.submitted === null);
  const inDoubt = runs.filter((run) => run.batched.submitted !== null && run.batched.submitted.batch_id === null);
  const rows = [...batches].map(([batchId, entry]) => ({ batch_id: batchId, status: entry.state?.status ?? null, ended: entry.state?.ended ?? null, counts: entry.state?.counts ?? null, runs: entry.runs.length, ...(entry.error ? { error: entry.error } : {}) }));
  if (format === "json") {
    io.out(`${JSON.stringify({ queued: queued.length, in_doubt: inDoubt.length, submitted: runs.length - queued.length - inDoubt.length, batches: rows })}\n`);
  } else {
    const lines = [
      `${queued.length} run${queued.length === 1 ? "" : "s"} queued (not yet submitted)${ids(queued)}`,
      `${inDoubt.length} run${inDoubt.length === 1 ? "" : "s"} in a submission whose answer was lost${ids(inDoubt)}`,
      ...rows.map((row) => `batch ${row.batch_id}: ${row.error ? `not asked: ${row.error}` : `${action === "cancel" ? "cancel asked, now " : ""}${row.status}${row.ended ? " (ended: continue --due collects it)" : ""}, counts ${JSON.stringify(row.counts)}`}, ${row.runs} run${row.runs === 1 ? "" : "s"}`),
    ];
    io.out(terminalSafe(`${lines.join("\n")}\n`));
  }
  return rows.some((row) => row.error) ? EXIT.FAILED : EXIT.COMPLETED;
}

function ids(runs: readonly WaitingRun[]): string {
  if (runs.length === 0) return "";
  const shown = runs.slice(0, 5).map((run) => run.runId).join(", ");
  return `: ${shown}${runs.length > 5 ? ", …" : ""}`;
}

/** -w once or more, else the agent's workspaces (--agent), else where `run` puts runs. */
async function workspaces(flags: Record<string, unknown>): Promise<string[]> {
  const given = flags.workDir;
  if (Array.isArray(given)) {
    if (flags.agent !== undefined) throw new UsageError("Give -w <workspace> (once or more) or --agent <dir>, not both.");
    return given.map((dir) => resolve(String(dir)));
  }
  return scopeWorkspaces(await runScope(flags));
}
