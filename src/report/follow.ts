// Follows a run's journal as another process appends to it: yields new events until the run ends or its engine is gone.
import { setTimeout as sleep } from "node:timers/promises";
import type { JournalEvent } from "../journal/events.js";
import { createJournalReader } from "../journal/reader.js";
import { performance } from "node:perf_hooks";
import { assessOwner, heartbeatBetween, stalePeriodMs } from "../store/lease/judge.js";
import type { RecordReading } from "../store/lease/owner-record.js";
import type { RunPaths } from "../store/run-dir.js";
import { readCurrentOwner } from "../store/lease/take-run.js";

interface FollowOptions {
  signal?: AbortSignal;
  /** How often the journal is looked at while it does not grow. */
  pollMs?: number;
}

/** Why following stopped. */
type FollowEnd = "ended" | "engine-gone" | "aborted";

/**
 * Yields batches of events in journal order, each event once. It stops after an ENGINE_END that
 * is the last event, or when the run's engine process is dead and the journal has stopped growing
 * (a run killed with -9 never writes ENGINE_END). A journal is polled rather than watched: file
 * change notifications do not cross network file systems, where fan-outs often write.
 */
export async function* followJournal(paths: RunPaths, options: FollowOptions = {}): AsyncGenerator<JournalEvent[], FollowEnd> {
  // Keeps no event: each read parses what was appended, so following a run costs a line's memory, not the journal's.
  const reader = createJournalReader(paths.journal);
  const eventsAfter = (seq: number): JournalEvent[] => {
    const fresh: JournalEvent[] = [];
    // A file read from its start again (replaced) hands over what was printed: the seq says what is new.
    const unterminated = reader.read({ restart: () => {}, event: (event) => void (event.seq > seq && fresh.push(event)) });
    if (unterminated && unterminated.seq > seq) fresh.push(unterminated);
    return fresh;
  };
  const pollMs = options.pollMs ?? 100;
  const heartbeat = watchHeartbeat();
  let printedSeq = 0;
  let lastType: JournalEvent["type"] | null = null;
  /** Events read while judging the engine gone, yielded next. */
  let carried: JournalEvent[] = [];
  for (;;) {
    if (options.signal?.aborted) return "aborted";
    const after = carried.at(-1)?.seq ?? printedSeq;
    // A valid last line not yet terminated is read again until it is: each event is yielded once, by its seq.
    const fresh = [...carried, ...eventsAfter(after)];
    carried = [];
    if (fresh.length > 0) {
      printedSeq = fresh.at(-1)!.seq;
      lastType = fresh.at(-1)!.type;
      yield fresh;
    }
    if (lastType === "ENGINE_END") return "ended";
    if (fresh.length === 0 && holderGone(paths, heartbeat)) {
      // The engine may have appended its last events just before it exited: read once more.
      carried = eventsAfter(printedSeq);
      if (carried.length === 0) return "engine-gone";
    }
    try {
      await sleep(pollMs, undefined, { signal: options.signal });
    } catch {
      return "aborted";
    }
  }
}

/** The run's owner is gone: the run will not end by itself, unless it appended its end after we looked. */
function holderGone(paths: RunPaths, heartbeat: HeartbeatWatch): boolean {
  const reading = readCurrentOwner(paths);
  const holder = assessOwner(reading);
  return !(holder.state === "alive" || (holder.state === "other-host" && !heartbeat.stoppedFor(reading!)));
}

interface HeartbeatWatch {
  /** True once the record read has kept the same text for a stale period of this process's monotonic clock. */
  stoppedFor(reading: RecordReading): boolean;
}

/** A holder on another host is gone once its heartbeat stands still for its stale period, as `continue` judges it. */
function watchHeartbeat(): HeartbeatWatch {
  let seen: { reading: RecordReading; since: number } | null = null;
  return {
    stoppedFor(reading) {
      const now = performance.now();
      if (seen === null || heartbeatBetween(seen.reading, reading) !== "silent") seen = { reading, since: now };
      return now - seen.since > stalePeriodMs(reading.record);
    },
  };
}
