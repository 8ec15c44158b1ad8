// `delta report`: a self-contained HTML report of one run, or of every run of a workspace, to a file (-o) or stdout.
import { resolve } from "node:path";
import { fsError } from "../../fs-errors.js";
import { runReportHtml } from "../../report/html-run.js";
import { workspaceReportHtml } from "../../report/html-workspace.js";
import { readModelCalls } from "../../report/model-calls.js";
import { loadRunAccount, loadWorkspaceAccounts } from "../../report/run-account.js";
import { writeFileAtomic } from "../../store/atomic-file.js";
import { scopeWorkspaces } from "../../store/locate-run.js";
import type { CliIo } from "../io.js";
import { optionalString } from "../options.js";
import { findRun } from "../run-query.js";
import { runScope } from "../run-scope.js";

export async function reportCommand(runId: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const output = optionalString("-o/--output", flags.output);
  let text: string;
  if (runId === undefined && !flags.last) {
    const workDirs = scopeWorkspaces(await runScope(flags));
    text = workspaceReportHtml(workDirs, loadWorkspaceAccounts(workDirs, warn));
  } else {
    const run = await findRun(runId, flags, warn);
    text = runReportHtml(loadRunAccount(run.workDir, run.runId, run.paths, warn), readModelCalls(run.paths, warn));
  }
  if (output === undefined) {
    io.out(text);
    return 0;
  }
  const file = resolve(output);
  try {
    writeFileAtomic(file, text);
  } catch (err) {
    throw fsError(`Cannot write the report to ${file}`, err, { hint: "give a writable path with -o", otherwise: "refused" });
  }
  io.err(`Wrote ${file}\n`);
  return 0;
}
