// `delta report`: a self-contained HTML report of one run, or of every run of a workspace, to a file (-o) or stdout.
import { runReportHtml } from "../../report/html-run.js";
import { workspaceReportHtml } from "../../report/html-workspace.js";
import { readModelCalls } from "../../report/model-calls.js";
import { loadRunAccount, loadWorkspaceAccounts } from "../../report/run-account.js";
import { scopeWorkspaces } from "../../store/locate-run.js";
import type { CliIo } from "../io.js";
import { optionalString } from "../options.js";
import { checkOutputFile, writeOutputFile } from "../output-file.js";
import { findRun } from "../run-query.js";
import { runScope } from "../run-scope.js";

export async function reportCommand(runId: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const given = optionalString("-o/--output", flags.output);
  const file = given === undefined ? undefined : checkOutputFile(given);
  let text: string;
  if (runId === undefined && !flags.last) {
    const workDirs = scopeWorkspaces(await runScope(flags));
    text = workspaceReportHtml(workDirs, loadWorkspaceAccounts(workDirs, warn));
  } else {
    const run = await findRun(runId, flags, warn);
    text = runReportHtml(loadRunAccount(run.workDir, run.runId, run.paths, warn), readModelCalls(run.paths, warn));
  }
  if (file === undefined) {
    io.out(text);
    return 0;
  }
  writeOutputFile(file, text);
  io.err(`Wrote ${file}\n`);
  return 0;
}
