// `delta report`: a self-contained HTML report of one run, or of every run of a workspace, to a file (-o), to a pipe, or, on a terminal, to a file named after the run.
import { resolve } from "node:path";
import { readHookRuns } from "../../report/hook-runs.js";
import { writeRunReport } from "../../report/html-run.js";
import { streamJournal } from "../../journal/reader.js";
import { writeWorkspaceReport } from "../../report/html-workspace.js";
import { modelCallsFor } from "../../report/model-calls.js";
import { loadRunAccount, loadWorkspaceRows } from "../../report/run-account.js";
import { scopeWorkspaces } from "../../store/locate-run.js";
import type { CliIo } from "../io.js";
import { optionalRunId, optionalString } from "../options.js";
import { gatherOutput } from "../gathered-output.js";
import { checkOutputFile, writeOutputFile } from "../output-file.js";
import { findRun } from "../run-query.js";
import { runScope } from "../run-scope.js";

/** The file a workspace report goes to when stdout is a terminal and -o is not given. */
const WORKSPACE_REPORT_FILE = "delta-runs.html";

export async function reportCommand(runIdGiven: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const runId = optionalRunId("the run id", runIdGiven);
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const given = optionalString("-o/--output", flags.output);
  let file = given === undefined ? undefined : checkOutputFile(given);
  let report: (write: (text: string) => void) => void;
  let name: string;
  if (runId === undefined && !flags.last) {
    const workDirs = scopeWorkspaces(await runScope(flags));
    const rows = loadWorkspaceRows(workDirs, warn);
    report = (write) => writeWorkspaceReport(workDirs, rows, write);
    name = WORKSPACE_REPORT_FILE;
  } else {
    const run = await findRun(runId, flags, warn);
    // Two passes over the journal, neither holding it: the account (status, timing, usage), then the events as they are written.
    const account = loadRunAccount(run.workDir, run.runId, run.paths, warn);
    const calls = modelCallsFor(account, warn);
    const hooks = readHookRuns(run.paths, warn);
    report = (write) => writeRunReport(account, calls, hooks, (visit) => streamJournal(run.paths.journal, visit), write);
    name = `${run.runId}.html`;
  }
  // Pages of HTML are no use on a terminal: there the report becomes a file in the current directory; a pipe gets the HTML.
  if (file === undefined && process.stdout.isTTY) file = resolve(name);
  if (file === undefined) {
    const output = gatherOutput((text) => io.data(text));
    report((text) => output.write(text));
    output.flush();
    return 0;
  }
  writeOutputFile(file, (write) => {
    const output = gatherOutput(write);
    report((text) => output.write(text));
    output.flush();
  });
  io.err(`Wrote ${file}\n`);
  return 0;
}
