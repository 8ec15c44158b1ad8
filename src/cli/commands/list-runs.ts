// `delta list-runs`: the runs of a workspace as text, JSON or bare ids (newest first).
import { resolve } from "node:path";
import { listRuns, type RunSummary } from "../../store/list-runs.js";
import type { CliIo } from "../io.js";
import { optionalString, parseFormat, parseStatus } from "../options.js";

export async function listRunsCommand(flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format);
  const workDir = resolve(optionalString("-w/--work-dir", flags.workDir) ?? ".");
  const runs = listRuns(workDir, { resumable: Boolean(flags.resumable), status: parseStatus(flags.status), first: Boolean(flags.first) }, (line) =>
    io.err(`[warning] ${line}\n`),
  );
  switch (format) {
    case "json":
      io.out(`${JSON.stringify(runs, null, 2)}\n`);
      break;
    case "raw":
      io.out(runs.map((run) => `${run.run_id}\n`).join(""));
      break;
    case "text":
      io.out(runs.length === 0 ? "" : `${runs.map(textLine).join("\n")}\n`);
      if (runs.length === 0) io.err(`No runs found in ${workDir}\n`);
      break;
  }
  return 0;
}

function textLine(run: RunSummary): string {
  const status = run.orphaned ? "RUNNING (orphaned)" : run.status;
  return `${run.run_id}  ${status.padEnd(18)} ${JSON.stringify(run.task_summary).padEnd(40)} ${ago(run.last_updated)}`;
}

function ago(iso: string): string {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86_400)}d ago`;
}
