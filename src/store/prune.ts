// `delta prune`: chooses the finished runs of a workspace (or of an agent's workspaces) that may go, and removes them, or only their io/, each while holding it.
import { lstatSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../errors.js";
import type { RunStatus } from "../journal/events.js";
import { readRunState } from "../journal/run-state.js";
import { pausePoint } from "../pause-point.js";
import { randomHex } from "../random-hex.js";
import type { RunSummary } from "./list-runs.js";
import { isLeftover, runPaths } from "./run-dir.js";
import type { RunId } from "./run-id.js";
import { takeRun } from "./lease/take-run.js";
import { runSize } from "./run-size.js";

/** Statuses prune may remove: COMPLETED by default; FAILED and INTERRUPTED runs are resumable and go only when named; DEFERRED runs wait to go on and never go. */
export const PRUNABLE: readonly RunStatus[] = ["COMPLETED", "FAILED", "INTERRUPTED"];

export interface PruneRule {
  status: RunStatus;
  /** Only runs last updated before this time (epoch ms). */
  olderThan?: number;
  /** Keep the newest `keep` runs of that status; only the rest may go. */
  keep?: number;
  /** Remove only io/ (the journal alone still shows and continues). */
  ioOnly: boolean;
}

interface PruneCandidate {
  run: RunSummary;
  bytes: number;
}

interface PruneSkip {
  run: RunSummary;
  reason: string;
}

/** The runs the rule selects, newest first; runs of another user are set aside with the reason. */
export function choosePrunable(runs: RunSummary[], rule: PruneRule): { chosen: PruneCandidate[]; skipped: PruneSkip[] } {
  const sameStatus = runs.filter((run) => run.status === rule.status && !run.original_engine).sort((a, b) => b.last_updated.localeCompare(a.last_updated));
  const beyondCount = rule.keep === undefined ? sameStatus : sameStatus.slice(rule.keep);
  const old = rule.olderThan === undefined ? beyondCount : beyondCount.filter((run) => Date.parse(run.last_updated) < rule.olderThan!);
  const chosen: PruneCandidate[] = [];
  const skipped: PruneSkip[] = [];
  const uid = process.getuid?.();
  for (const run of old) {
    const paths = runPaths(run.work_dir, run.run_id);
    try {
      const owner = lstatSync(paths.runDir).uid;
      if (uid !== undefined && owner !== uid) {
        skipped.push({ run, reason: `owned by user ${owner}, not by you` });
        continue;
      }
    } catch (err) {
      skipped.push({ run, reason: errorMessage(err) });
      continue;
    }
    const size = runSize(run.work_dir, run.run_id);
    chosen.push({ run, bytes: rule.ioOnly ? size.io_bytes : size.total_bytes });
  }
  return { chosen, skipped };
}

/**
 * Takes the run as `continue` does (a live holder refuses), judges it again from its journal now that no one else can
 * change it, and only then removes it: a whole run is first renamed to a hidden name, so it is never seen half-removed.
 * Returns null when removed, else why it was left alone.
 */
export async function pruneRun(candidate: PruneCandidate, rule: PruneRule): Promise<string | null> {
  const { run } = candidate;
  const paths = runPaths(run.work_dir, run.run_id);
  pausePoint("prune-judged", run.run_id);
  let hold;
  try {
    hold = await takeRun(paths, { runId: run.run_id, workDir: run.work_dir, force: false });
  } catch (err) {
    return errorMessage(err);
  }
  try {
    const status = readRunState(paths.journal).status;
    if (status !== rule.status) return `it is ${status} now`;
    if (rule.ioOnly) {
      rmSync(join(paths.runDir, "io"), { recursive: true, force: true });
      return null;
    }
    removeRunDir(run.work_dir, run.run_id);
    return null;
  } catch (err) {
    return errorMessage(err);
  } finally {
    hold.release();
  }
}

/**
 * Removes a leftover run folder (run-dir.ts isLeftover: owner records and nothing else), taken first as a run is, so a
 * process taking it at this moment keeps it. Returns null when removed, else why it was left alone.
 */
export async function pruneLeftover(workDir: string, runId: RunId): Promise<string | null> {
  const paths = runPaths(workDir, runId);
  let hold;
  try {
    hold = await takeRun(paths, { runId, workDir, force: false });
  } catch (err) {
    return errorMessage(err);
  }
  try {
    if (!isLeftover(paths)) return "it holds a run's files now";
    removeRunDir(workDir, runId);
    return null;
  } catch (err) {
    return errorMessage(err);
  } finally {
    hold.release();
  }
}

/** Renamed to a hidden name first, so the folder is never seen half-removed. */
function removeRunDir(workDir: string, runId: RunId): void {
  const hidden = join(workDir, ".delta", `.prune-${runId}-${randomHex(4)}`);
  renameSync(runPaths(workDir, runId).runDir, hidden);
  rmSync(hidden, { recursive: true, force: true });
}
