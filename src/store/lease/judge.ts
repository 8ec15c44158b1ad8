// The judgement of a run's holder: whether the process an owner record names may still write the run, here by its pid, elsewhere by its heartbeat.
//
// A holder on this host (same machine id, boot id and PID namespace) is judged at once: its pid, and that pid's start.
// A holder anywhere else, or one that must be proven stuck, is watched: its record is read, this process waits five of
// the holder's beats by its own monotonic clock, and reads it again. Unchanged means no beat in all that time: the
// holder is dead or stopped, and a stopped one is fenced off the journal (fence.ts) before it could write again.
// Neither a remote modification time nor another host's clock is ever compared with this one's.
import { RunRefusedError } from "../../errors.js";
import { answersSignals, isGone, readProcStat, startTimeMs, type ProcStat } from "../../process/proc-stat.js";
import { describeHost, isThisHost } from "./host-identity.js";
import { heartbeatInterval, type OwnerRecord, type RecordReading } from "./owner-record.js";

/** A holder missing this many of its beats in a row is taken for dead (or stopped, and then fenced). */
const STALE_BEATS = 5;

/** How long a taker watches a record before judging its holder: STALE_BEATS of the beats the record promises. */
export function stalePeriodMs(record: OwnerRecord | null): number {
  return STALE_BEATS * (record?.heartbeat_ms ?? heartbeatInterval());
}

/** /proc gives a process's start after a boot time in whole seconds: allow for that, for records without start_ticks. */
const START_TIME_SLACK_MS = 2_000;

export type HolderAssessment =
  | { state: "alive"; stopped: boolean }
  | { state: "dead"; reason: string }
  /** On another host (or in another container): judged only by watching its heartbeat. */
  | { state: "other-host"; host: string };

/** Looks at a record's holder without changing anything or waiting. */
function assessHolder(owner: OwnerRecord): HolderAssessment {
  if (!isThisHost(owner)) return { state: "other-host", host: describeHost(owner) };
  if (owner.pid === process.pid) return { state: "dead", reason: `process ${owner.pid} is this process` };
  const stat = readProcStat(owner.pid);
  if (!answersSignals(owner.pid) || (stat !== null && isGone(stat))) return { state: "dead", reason: `process ${owner.pid} no longer exists` };
  const reused = stat === null ? null : reusedPid(owner, stat);
  if (reused !== null) return { state: "dead", reason: reused };
  return { state: "alive", stopped: stat !== null && (stat.state === "T" || stat.state === "t") };
}

function reusedPid(owner: OwnerRecord, stat: ProcStat): string | null {
  if (owner.start_ticks != null) {
    return stat.startTicks === owner.start_ticks ? null : `process ${owner.pid} is another process than the one that held the run (it started at another time: pid reused)`;
  }
  // A record without the holder's start (not written on Linux): the process must have started before it took the run.
  const started = startTimeMs(stat);
  return started !== null && started > owner.acquired_at_unix + START_TIME_SLACK_MS ? `process ${owner.pid} started after the run did, so it is not the run's engine (pid reused)` : null;
}

/** Why the run may be taken from its previous holder, and whether that holder might still write (then it is fenced off). */
export interface TakeoverVerdict {
  reason: string;
  /** The previous holder let the run go cleanly. */
  released: boolean;
  /** The previous holder is not proven dead: the journal is replaced so that a late write of its can reach no one. */
  fence: boolean;
}

interface OwnerFacts {
  runId: string;
  workDir: string;
  /** The current holder's record, or why it could not be read. */
  reading: RecordReading;
}

/** What to do about a holder: take the run at once, or watch the holder's heartbeat for `periodMs` first. */
type Judgement = { verdict: TakeoverVerdict } | { watch: { periodMs: number; holder: string } };

/** Judges the run's current owner record without waiting. Refuses (126) when the run may not be taken. */
export function judgeOwner(facts: OwnerFacts, options: { force: boolean }): Judgement {
  const { reading, runId } = facts;
  const owner = reading.record;
  if (owner === null) {
    if (options.force) return { watch: { periodMs: stalePeriodMs(null), holder: "the owner record" } };
    throw new RunRefusedError(
      `Run ${runId}'s owner record cannot be read: ${reading.problem}.\n` +
        `If no engine is running this run, take it over with --force: the run is taken once the record has stayed unchanged for ${seconds(stalePeriodMs(null))} s.`,
    );
  }
  if (owner.released_at_unix !== null) return { verdict: { reason: `released by process ${owner.pid} on ${describeHost(owner)}`, released: true, fence: false } };
  const holder = assessHolder(owner);
  if (holder.state === "dead") return { verdict: { reason: holder.reason, released: false, fence: false } };
  const watch = { watch: { periodMs: stalePeriodMs(owner), holder: `process ${owner.pid} on ${describeHost(owner)}` } };
  if (holder.state === "other-host" || options.force) return watch;
  if (holder.stopped) {
    throw new RunRefusedError(
      `Run ${runId} is still active (PID ${owner.pid}), but that process is stopped (Ctrl-Z, SIGSTOP).\n` +
        "Resume or end that process, or take the run over with --force once its heartbeat has stopped (the old process is then stopped from writing).",
    );
  }
  throw new RunRefusedError(`Run ${runId} is still active (PID ${owner.pid}).\nCannot continue while original process is running; ${waitHint(facts.workDir)}.`);
}

/**
 * Judges a holder from two readings of its record `periodMs` apart by this process's clock. The same text twice: no
 * beat in all that time, so the run is taken and the holder fenced off. A release: taken at once. A beat: refused (126).
 */
export function judgeWatched(facts: OwnerFacts, second: RecordReading, periodMs: number): TakeoverVerdict {
  const first = facts.reading;
  const owner = first.record;
  const waited = `${seconds(periodMs)} s`;
  const seen = heartbeatBetween(first, second);
  if (seen === "silent") {
    if (owner === null) return { reason: `its owner record could not be read (${first.problem}) and did not change in ${waited}; --force given`, released: false, fence: true };
    return { reason: `process ${owner.pid} on ${describeHost(owner)} made no heartbeat in ${waited} (still at ${owner.heartbeat ?? "none"})`, released: false, fence: true };
  }
  const now = second.record;
  if (seen === "released" && now !== null) return { reason: `released by process ${now.pid} on ${describeHost(now)}`, released: true, fence: false };
  const who = now === null ? "another process" : `process ${now.pid} on ${describeHost(now)}`;
  const beats = owner && now ? ` (its heartbeat went from ${owner.heartbeat ?? "none"} to ${now.heartbeat ?? "none"} in ${waited})` : ` (its owner record changed within ${waited})`;
  throw new RunRefusedError(`Run ${facts.runId} is being written by ${who}, which is alive${beats}; ${waitHint(facts.workDir)}.`);
}

/** What became of a holder between two readings of its record, some time apart by this process's clock. */
type HeartbeatSeen =
  /** The same text: no beat in all that time (dead, or stopped). */
  | "silent"
  /** Let go cleanly, or its record is gone (a holder cleans up its own record only after a release). */
  | "released"
  /** Another generation holds the run now. */
  | "taken"
  /** Its heartbeat moved: alive. */
  | "beating";

/**
 * The one reading of a heartbeat, for `continue` (judgeWatched), `list-runs --check-liveness` and `show --follow`: only
 * the record's text is compared, never a time from another host's clock or a file's modification time.
 */
export function heartbeatBetween(first: RecordReading, second: RecordReading | null): HeartbeatSeen {
  if (second !== null && second.text === first.text) return "silent";
  if (second === null || second.record?.released_at_unix != null) return "released";
  if (second.record !== null && first.record !== null && second.record.generation !== first.record.generation) return "taken";
  return "beating";
}

/**
 * For those who only look (list-runs, show, report): whether the run's current owner may still write it, without
 * waiting. No record, or one marked released, means no process holds the run; a record that cannot be read is taken
 * as a live holder; a holder elsewhere is "other-host" (see checkLiveness in liveness-check.ts).
 */
export function assessOwner(reading: RecordReading | null): HolderAssessment {
  if (reading === null) return { state: "dead", reason: "no process holds it" };
  const owner = reading.record;
  if (owner === null) return { state: "alive", stopped: false };
  if (owner.released_at_unix !== null) return { state: "dead", reason: `process ${owner.pid} released it` };
  return assessHolder(owner);
}

function waitHint(workDir: string): string {
  return `wait for it to finish (\`delta list-runs -w ${workDir}\` shows the run's status)`;
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}
