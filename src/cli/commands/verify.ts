// `delta verify`: whether a run's journal is still what the engine wrote, and where it is not (exit 0 intact, 1 broken, 2 unchained).
import { CHAIN_EXIT, errorMessage } from "../../errors.js";
import { verifyJournalChain, type RecordedEnd } from "../../journal/chain-verify.js";
import { verdictJson, verdictText, type ChainVerdict } from "../../report/chain-verdict.js";
import { textStyle } from "../../report/text-style.js";
import { readMetadata } from "../../store/run-metadata.js";
import type { RunPaths } from "../../store/run-dir.js";
import { stdoutWantsColour, type CliIo } from "../io.js";
import { optionalRunId, parseFormat } from "../options.js";
import { findRun } from "../run-query.js";

export async function verifyCommand(runIdGiven: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const runId = optionalRunId("the run id", runIdGiven);
  const format = parseFormat(flags.format, ["text", "json"]);
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const run = await findRun(runId, flags, warn);
  const recordedEnd = endRecordedIn(run.paths, warn);
  const verdict: ChainVerdict = { ...verifyJournalChain(run.paths.journal, recordedEnd), runId: run.runId, journal: run.paths.journal, recordedEnd };
  // The data path both ways: JSON escapes by itself, and the verdict's text strips every piece from the run before it is coloured (as show's account does).
  if (format === "json") io.data(`${JSON.stringify(verdictJson(verdict), null, 2)}\n`);
  else io.data(`${verdictText(verdict, textStyle(stdoutWantsColour())).join("\n")}\n`);
  return CHAIN_EXIT[verdict.status];
}

/** Where the journal ended when the run's last process ended, as metadata.json recorded it; null (said on stderr) when it cannot tell. */
function endRecordedIn(paths: RunPaths, warn: (line: string) => void): RecordedEnd | null {
  try {
    const metadata = readMetadata(paths);
    if (metadata.journal_bytes === undefined || metadata.journal_hash === undefined) return null;
    return { bytes: metadata.journal_bytes, hash: metadata.journal_hash };
  } catch (err) {
    warn(`${errorMessage(err)}: the journal's end is checked against its chain only`);
    return null;
  }
}
