// Who holds a ledger's reservations: one holder record per process, the run lease's owner record (beating, released at the end), judged by the lease's one judge when its reservations stand in another call's way.
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { randomHex } from "../../random-hex.js";
import { assessOwner, heartbeatBetween, stalePeriodMs } from "../lease/judge.js";
import { claimGeneration, listGenerations, ownRecord, readRecord, type RecordReading } from "../lease/owner-record.js";
import { holdNewLock, type RunHold } from "../lease/take-run.js";
import { holdersDir } from "./ledger-state.js";

/** This process's holder of a ledger's reservations. */
export interface LedgerHolder {
  id: string;
  hold: RunHold;
}

/** A new holder record for this process, beating from now until released. */
export function newHolder(ledger: string): LedgerHolder {
  const id = `${hostname().replace(/[^A-Za-z0-9.-]/g, "_").slice(0, 64)}-${process.pid}-${randomHex(4)}`;
  return { id, hold: holdNewLock(join(holdersDir(ledger), id)) };
}

/** Removes a holder's record once no reservation names it. */
export function removeHolder(ledger: string, id: string): void {
  rmSync(join(holdersDir(ledger), id), { recursive: true, force: true });
}

/**
 * Judges the holders of reservations, as `continue` judges a run's holder: one on this host at once, by its pid; one
 * elsewhere by watching its record for five of its beats by this process's monotonic clock, across calls of `deadHolder`.
 */
export class HolderJudge {
  private readonly watched = new Map<string, { reading: RecordReading; since: number }>();

  constructor(private readonly ledger: string) {}

  /**
   * Why `id` holds its reservations no more, having fenced it off them (its record's next generation, which the
   * holder sees at its next beat); null while it is alive, or not yet watched long enough.
   */
  deadHolder(id: string): string | null {
    const lockDir = join(holdersDir(this.ledger), id);
    const generations = listGenerations(lockDir);
    if (generations.length === 0) return "its holder record is gone";
    if (generations[0]! >= 2) return "another process judged its holder gone";
    const reading = readRecord(lockDir, 1);
    if (reading === null) return "its holder record is gone";
    const dead = this.verdict(id, reading);
    if (dead === null) return null;
    this.watched.delete(id);
    // The fencing token: the holder finds generation 2 and knows its reservations were charged and dropped.
    try {
      claimGeneration(lockDir, ownRecord(2, dead));
    } catch (err) {
      // The holder released and removed its record meanwhile, its calls settled first: nothing is left to fence.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return "its holder record is gone";
      throw err;
    }
    return dead;
  }

  private verdict(id: string, reading: RecordReading): string | null {
    // A record that cannot be read is watched as one on another host is: unchanged for the stale period, it is dead.
    const holder = reading.record === null ? { state: "other-host" as const, host: "an unknown host" } : assessOwner(reading);
    if (holder.state === "dead") return holder.reason;
    if (holder.state === "alive") return null;
    const first = this.watched.get(id);
    const now = performance.now();
    if (first === undefined) {
      this.watched.set(id, { reading, since: now });
      return null;
    }
    const periodMs = stalePeriodMs(first.reading.record);
    if (now - first.since < periodMs) return null;
    const seen = heartbeatBetween(first.reading, reading);
    if (seen === "silent") return `process ${first.reading.record?.pid ?? "?"} on ${holder.host} made no heartbeat in ${Math.round(periodMs / 100) / 10} s`;
    if (seen === "released") return `process ${first.reading.record?.pid ?? "?"} on ${holder.host} released it`;
    this.watched.set(id, { reading, since: now });
    return null;
  }
}
