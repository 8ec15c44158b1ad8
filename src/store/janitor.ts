// The janitor: judges whether the process recorded as a run's owner may still write it.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { RunRefusedError } from "../errors.js";
import type { RecordReading } from "./owner-record.js";

export interface HolderFacts {
  run_id: string;
  pid: number;
  hostname: string;
  /** When the recorded engine began this hold on the run (metadata start_time_unix, ms). */
  start_time_unix: number;
}

/** /proc gives a process's start in clock ticks (100 a second on Linux) after a boot time in whole seconds: allow for that. */
const START_TIME_SLACK_MS = 2_000;
const CLOCK_TICKS_PER_SECOND = 100;

export type HolderAssessment =
  | { state: "alive" }
  | { state: "dead"; reason: string }
  | { state: "other-host"; host: string };

/** Looks at the recorded engine process without changing anything. */
export function assessHolder(facts: HolderFacts): HolderAssessment {
  if (facts.hostname !== hostname()) return { state: "other-host", host: facts.hostname };
  if (facts.pid === process.pid) return { state: "dead", reason: `process ${facts.pid} is this process` };
  const stat = isProcessAlive(facts.pid) ? procStatFields(facts.pid) : undefined;
  if (stat === undefined || isZombie(stat)) return { state: "dead", reason: `process ${facts.pid} no longer exists` };
  const name = processName(facts.pid);
  if (name !== null && !/node|delta/i.test(name)) {
    return { state: "dead", reason: `process ${facts.pid} is now '${name}', not a delta engine (pid reused)` };
  }
  const started = processStartTimeMs(stat);
  if (started !== null && started > facts.start_time_unix + START_TIME_SLACK_MS) {
    return { state: "dead", reason: `process ${facts.pid} started after the run did, so it is not the run's engine (pid reused)` };
  }
  return { state: "alive" };
}

/** How long a holder's record may go without a refresh before `--force` may take the run from it. */
export const LOCK_STALE_MS = 10_000;

/** Why the run may be taken from its previous holder, and whether that holder might still write (then it is fenced off). */
export interface TakeoverVerdict {
  reason: string;
  /** The previous holder let the run go cleanly. */
  released: boolean;
  /** The previous holder is not proven dead: the journal is replaced so that a late write of its can reach no one. */
  fence: boolean;
}

export interface OwnerFacts {
  runId: string;
  workDir: string;
  /** The current holder's record, or why it could not be read. */
  reading: RecordReading;
}

/** Judges the run's current owner record: may this process take the run over? Refuses (126) when it may not. */
export function judgeOwner(facts: OwnerFacts, options: { force: boolean }): TakeoverVerdict {
  const { reading, runId } = facts;
  const stale = reading.ageMs > LOCK_STALE_MS;
  const age = `${Math.round(reading.ageMs / 1000)} s`;
  if (reading.record === null) {
    if (options.force && stale) return { reason: `its owner record could not be read (${reading.problem}); --force given`, released: false, fence: true };
    throw new RunRefusedError(
      `Run ${runId}'s owner record cannot be read: ${reading.problem}.\n` +
        `If no engine is running this run, take it over with --force once the record is ${LOCK_STALE_MS / 1000} s old (it is ${age}).`,
    );
  }
  const owner = reading.record;
  if (owner.released_at_unix !== null) return { reason: `released by process ${owner.pid} on ${owner.hostname}`, released: true, fence: false };
  const holder = assessHolder({ run_id: runId, pid: owner.pid, hostname: owner.hostname, start_time_unix: owner.acquired_at_unix });
  if (holder.state === "dead") return { reason: holder.reason, released: false, fence: false };
  if (options.force && stale) {
    return { reason: `process ${owner.pid} on ${owner.hostname} has not refreshed its lock for ${age}; --force given`, released: false, fence: true };
  }
  const wait = `wait for it to finish (\`delta list-runs -w ${facts.workDir}\` shows the run's status)`;
  if (holder.state === "other-host") {
    if (options.force) {
      throw new RunRefusedError(
        `Run ${runId} is being written by another process (pid ${owner.pid} on host '${owner.hostname}'), which refreshed its lock ${age} ago; ${wait}. ` +
          `--force takes the run over only once the lock has gone ${LOCK_STALE_MS / 1000} s without a refresh.`,
      );
    }
    throw new RunRefusedError(
      `Run ${runId} was started on host '${holder.host}'.\n` +
        `Cannot verify process status from host '${hostname()}'.\n` +
        "If you're certain the original process is dead, use --force.",
    );
  }
  if (stale) {
    throw new RunRefusedError(
      `Run ${runId} is still active (PID ${owner.pid}), but its lock has not been refreshed for ${age}: the process may be stopped (Ctrl-Z, SIGSTOP).\n` +
        "Resume or end that process, or take the run over with --force (the old process is then stopped from writing).",
    );
  }
  throw new RunRefusedError(`Run ${runId} is still active (PID ${owner.pid}).\nCannot continue while original process is running; ${wait}.`);
}

/**
 * For those who only look (list-runs, show, report): whether the run's current owner may still write it. No record,
 * or one marked released, means no process holds the run; a record that cannot be read is taken as a live holder.
 */
export function assessOwner(reading: RecordReading | null, runId: string): HolderAssessment {
  if (reading === null) return { state: "dead", reason: "no process holds it" };
  const owner = reading.record;
  if (owner === null) return { state: "alive" };
  if (owner.released_at_unix !== null) return { state: "dead", reason: `process ${owner.pid} released it` };
  return assessHolder({ run_id: runId, pid: owner.pid, hostname: owner.hostname, start_time_unix: owner.acquired_at_unix });
}

/** When process `pid` started (Unix ms), as /proc tells it; null when it is gone, a zombie, or /proc cannot say. */
export function processStartedAt(pid: number): number | null {
  const stat = isProcessAlive(pid) ? procStatFields(pid) : null;
  return stat === null || isZombie(stat) ? null : processStartTimeMs(stat);
}

function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The fields of /proc/<pid>/stat after the parenthesized command name (state first), or null where that cannot be read. */
function procStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** A killed process its parent has not reaped yet still answers kill(0) but runs nothing. */
function isZombie(stat: string[] | null): boolean {
  return stat?.[0] === "Z" || stat?.[0] === "X";
}

/** The process's command line on Linux (/proc), or null where that cannot be read. */
function processName(pid: number): string | null {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
    return cmdline || readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}

/** When the process started (Unix ms) from its stat fields and /proc/stat's btime, or null where that cannot be read. */
function processStartTimeMs(stat: string[] | null): number | null {
  if (stat === null) return null;
  try {
    // starttime is field 22 of the whole line, the 20th after ")".
    const ticks = Number(stat[19]);
    const bootLine = readFileSync("/proc/stat", "utf8").split("\n").find((line) => line.startsWith("btime "));
    const bootSeconds = Number(bootLine?.split(/\s+/)[1]);
    if (!Number.isFinite(ticks) || !Number.isFinite(bootSeconds)) return null;
    return bootSeconds * 1000 + (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
