// `delta show`: a run as readable text on stdout, or followed live (`--follow`) as another process appends to its journal.
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { EXIT, RunRefusedError, UsageError } from "../../errors.js";
import { indexInvocationRecords, readInvocationRecord, rebuildRequests } from "../../store/recorded-requests.js";
import { followJournal } from "../../report/follow.js";
import { loadRunAccount, trackRunAccount } from "../../report/run-account.js";
import { createFoldTracker } from "../../journal/fold.js";
import { streamJournal } from "../../journal/reader.js";
import { createEventFormatter, runFooter, runHeader } from "../../report/show-text.js";
import { textStyle } from "../../report/text-style.js";
import type { LocatedRun } from "../../store/locate-run.js";
import { isDirectory, runPaths } from "../../store/run-dir.js";
import type { RunId } from "../../store/run-id.js";
import { readMetadata } from "../../store/run-metadata.js";
import { gatherOutput } from "../gathered-output.js";
import { stdoutWantsColour, type CliIo } from "../io.js";
import { optionalRunId } from "../options.js";
import { findRun } from "../run-query.js";
import { runScope } from "../run-scope.js";

export async function showCommand(runIdGiven: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const runId = optionalRunId("the run id", runIdGiven);
  const style = textStyle(stdoutWantsColour());
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  if (flags.request !== undefined) return showRequest(runId, flags, io, warn);
  if (!flags.follow) {
    const run = await findRun(runId, flags, warn);
    // Two passes over the journal, neither holding it: the account for the header and footer, then each event printed as it is read.
    const account = loadRunAccount(run.workDir, run.runId, run.paths, warn);
    const format = createEventFormatter(style, { full: Boolean(flags.full) });
    const output = gatherOutput((text) => io.data(text));
    output.write(`${runHeader(account, style).join("\n")}\n\n`);
    streamJournal(run.paths.journal, (event) => {
      // The journal may have grown since the account was folded: the listing stops where the account did.
      if (event.seq <= account.eventCount) output.write(format(event).map((line) => `${line}\n`).join(""));
    });
    output.write(`\n${runFooter(account, style).join("\n")}\n`);
    output.flush();
    return EXIT.COMPLETED;
  }
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const run = await locateOrWait(runId, flags, io, controller.signal, warn);
    if (!run) return EXIT.INTERRUPTED;
    return await follow(run, io, style, controller.signal, Boolean(flags.full));
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

async function follow(run: LocatedRun, io: CliIo, style: ReturnType<typeof textStyle>, signal: AbortSignal, full: boolean): Promise<number> {
  const format = createEventFormatter(style, { full });
  io.data(`${style.bold(`Run ${run.runId}`)}  ${style.dim(run.paths.runDir)}\n\n`);
  // The footer's account is folded as the events go by; none is kept.
  const tracker = createFoldTracker();
  const account = trackRunAccount(tracker);
  const journal = followJournal(run.paths, { signal });
  let step = await journal.next();
  while (!step.done) {
    for (const event of step.value) tracker.see(event);
    io.data(step.value.flatMap(format).map((line) => `${line}\n`).join(""));
    step = await journal.next();
  }
  if (step.value === "aborted") return EXIT.INTERRUPTED;
  let metadata = null;
  try {
    metadata = readMetadata(run.paths);
  } catch {
    // The journal alone tells the status; metadata only adds whether the engine lives.
  }
  io.data(`\n${runFooter(account({ workDir: run.workDir, runId: run.runId, paths: run.paths, metadata }), style).join("\n")}\n`);
  return EXIT.COMPLETED;
}

/** With --follow a run id may name a run about to start (a fan-out just launched): wait for its directory to appear in -w. */
async function locateOrWait(runId: RunId | undefined, flags: Record<string, unknown>, io: CliIo, signal: AbortSignal, warn: (line: string) => void): Promise<LocatedRun | null> {
  let told = false;
  for (;;) {
    try {
      return await findRun(runId, flags, warn);
    } catch (err) {
      const scope = await runScope(flags);
      if (!(err instanceof RunRefusedError) || runId === undefined || !("workDir" in scope)) throw err;
      if (existsSync(runPaths(scope.workDir, runId).runDir)) throw err;
      // Waiting on a mistyped workspace would last forever: the workspace must exist, the run need not yet.
      if (!isDirectory(scope.workDir)) throw new UsageError(`-w ${scope.workDir}: no such directory; give the workspace the run will be in (create it first to follow a run about to start there)`);
      if (!told) io.err(`Waiting for run ${runId} to start in ${scope.workDir} (Ctrl-C to stop)\n`);
      told = true;
    }
    try {
      await sleep(200, undefined, { signal });
    } catch {
      return null;
    }
  }
}

/** `--request N`: the request of model call N (its iteration) as JSON, rebuilt from io/invocations/; the last one when a call was repeated. */
async function showRequest(runId: RunId | undefined, flags: Record<string, unknown>, io: CliIo, warn: (line: string) => void): Promise<number> {
  const wanted = Number(flags.request);
  if (!Number.isInteger(wanted) || wanted < 1) throw new UsageError(`--request takes an iteration number (1, 2, …), got ${JSON.stringify(String(flags.request))}.`);
  if (flags.follow) throw new UsageError("--request prints one recorded request; it cannot be combined with --follow.");
  const run = await findRun(runId, flags, warn);
  // The records are checked one at a time and only the one asked for is kept.
  const records = indexInvocationRecords(run.paths);
  const matching = records.filter(({ iteration }) => iteration === wanted);
  const last = matching[matching.length - 1];
  if (!last) {
    const known = records.length > 0 ? `it has requests for iterations ${records[0]!.iteration} to ${records[records.length - 1]!.iteration}` : "its io/invocations/ holds no record (pruned, or no model call yet)";
    throw new RunRefusedError(`Run ${run.runId} has no recorded request for iteration ${wanted}: ${known}.`);
  }
  const [rebuilt] = rebuildRequests(run.paths, [{ file: last.file, record: readInvocationRecord(last.file) }]);
  io.data(`${JSON.stringify(rebuilt!.request, null, 2)}\n`);
  return EXIT.COMPLETED;
}

/** Colour only on a terminal, and never when NO_COLOR is set to anything (no-color.org). */
