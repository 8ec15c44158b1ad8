// `list-runs --check-liveness`: watches the heartbeat of every run held on another host, all at once, for one stale period.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { heartbeatBetween, stalePeriodMs } from "./judge.js";
import type { HolderSummary, RunSummary } from "../list-runs.js";
import type { RecordReading } from "./owner-record.js";
import { runPaths } from "../run-dir.js";
import { readCurrentOwner } from "./take-run.js";

/**
 * Reads the owner record of every run whose holder is unchecked, waits the longest of their stale periods by this
 * process's monotonic clock (once, however many runs), and reads them again: the same text means no heartbeat in all
 * that time (dead, orphaned: `continue` takes it over after its own watch); any change means alive.
 */
export async function checkLiveness(runs: RunSummary[]): Promise<RunSummary[]> {
  const watched = runs.flatMap((run) => {
    if (run.holder?.state !== "unchecked") return [];
    const first = readCurrentOwner(runPaths(run.work_dir, run.run_id));
    return first === null ? [] : [{ run, first }];
  });
  if (watched.length === 0) return runs;
  const periodMs = Math.max(...watched.map(({ first }) => stalePeriodMs(first.record)));
  const start = performance.now();
  for (let left = periodMs; left > 0; left = periodMs - (performance.now() - start)) await sleep(Math.ceil(left));
  const judged = new Map(watched.map(({ run, first }) => [run, judge(first, readCurrentOwner(runPaths(run.work_dir, run.run_id)), periodMs)]));
  return runs.map((run) => {
    const holder = judged.get(run);
    return holder === undefined ? run : { ...run, holder, orphaned: holder.state === "dead" };
  });
}

function judge(first: RecordReading, second: RecordReading | null, periodMs: number): HolderSummary {
  const owner = first.record;
  const who = { pid: owner?.pid ?? null, hostname: owner?.hostname ?? null };
  const waited = `${Math.round(periodMs / 100) / 10} s`;
  const seen = heartbeatBetween(first, second);
  switch (seen) {
    case "silent":
      return { state: "dead", ...who, detail: `no heartbeat in ${waited} (still at ${owner?.heartbeat ?? "none"})` };
    case "released":
      return { state: "dead", ...who, detail: "released while this process watched it" };
    case "taken":
      return { state: "alive", pid: second?.record?.pid ?? null, hostname: second?.record?.hostname ?? null, detail: "taken by another process while this one watched it" };
    case "beating":
      return { state: "alive", ...who, detail: `its heartbeat went from ${owner?.heartbeat ?? "none"} to ${second?.record?.heartbeat ?? "none"} in ${waited}` };
    default:
      return seen satisfies never;
  }
}
