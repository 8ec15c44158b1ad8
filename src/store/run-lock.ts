// One writer per run: taking a run (a new generation of its owner record), proving it is still held, letting it go.
//
// Taking a run: read the highest generation N in `.lock/`, judge that holder (janitor.ts), then create generation
// N + 1 exclusively (owner-record.ts). Of any number of processes that judged N, exactly one creates N + 1; the
// others are refused. A holder that was not proven dead may still be running, so its journal is fenced off first
// (journal-fence.ts). Before every journal write the holder checks that no later generation exists (RunHold.lostReason);
// every few seconds it refreshes its record and checks that the record is still there.
import { existsSync, rmSync, utimesSync } from "node:fs";
import { RunRefusedError } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { pausePoint } from "../pause-point.js";
import { judgeOwner, LOCK_STALE_MS, type TakeoverVerdict } from "./janitor.js";
import { fenceJournal } from "./journal-fence.js";
import { claimGeneration, listGenerations, ownRecord, readRecord, recordPath, rewriteOwnRecord, type OwnerRecord, type RecordReading } from "./owner-record.js";
import type { RunPaths } from "./run-dir.js";

/** How often a holder refreshes its record (its modification time), well inside LOCK_STALE_MS. */
export const LOCK_REFRESH_MS = LOCK_STALE_MS / 2;

/** A process's hold on a run. */
export interface RunHold {
  /** This hold's generation: the fencing token. */
  generation: number;
  /** How the previous holder was judged; null for a new run. */
  previous: (TakeoverVerdict & { owner: OwnerRecord | null }) | null;
  /** Why this process no longer owns the run, or null while it does. One file lookup: cheap enough for every write. */
  lostReason(): string | null;
  /** Aborted once the run is found taken from this process (by the refresh timer or any check). */
  lost: AbortSignal;
  /** Marks this process's own record released, unless the run was taken from it; idempotent. */
  release(): void;
}

/** Writes generation 1 into a run directory that is not published yet, so the run appears already held. */
export function createFirstOwner(paths: RunPaths): void {
  try {
    if (!claimGeneration(paths.lock, ownRecord(1, null))) throw new Error(`${paths.lock} already holds an owner record`);
  } catch (err) {
    throw fsError(`Cannot create the owner record in ${paths.lock}`, err);
  }
}

/** The hold on a new run whose first owner record this process wrote before publishing it. */
export function holdNewRun(paths: RunPaths): RunHold {
  return startHold(paths, 1, null);
}

export interface TakeOptions {
  runId: string;
  workDir: string;
  force: boolean;
}

/** Takes an existing run for this process, or refuses (126) when another process holds it or took it first. */
export function takeRun(paths: RunPaths, options: TakeOptions): RunHold {
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const current = listGenerations(paths.lock)[0] ?? 0;
      const reading = current === 0 ? null : readRecord(paths.lock, current);
      // A record removed since the listing means a newer holder cleaned up after itself: look again.
      if (current !== 0 && reading === null) continue;
      const verdict = reading === null ? null : judgeOwner({ runId: options.runId, workDir: options.workDir, reading }, { force: options.force });
      pausePoint("lock-judged");
      const mine = ownRecord(current + 1, verdict && !verdict.released ? verdict.reason : null);
      if (!claimGeneration(paths.lock, mine)) throw takenMeanwhile(options, current + 1);
      if (listGenerations(paths.lock)[0] !== mine.generation) {
        // Created over a generation a newer holder had already cleaned away: that holder owns the run, not us.
        rmSync(recordPath(paths.lock, mine.generation), { force: true });
        throw takenMeanwhile(options, mine.generation);
      }
      if (verdict?.fence) fenceOrWithdraw(paths, mine.generation);
      removeOldGenerations(paths, current);
      const hold = startHold(paths, mine.generation, verdict === null ? null : { ...verdict, owner: ownerOf(reading) });
      pausePoint("lock-held");
      return hold;
    }
  } catch (err) {
    if (err instanceof RunRefusedError) throw err;
    throw fsError(`Cannot take the lock of ${paths.runDir}`, err, { hint: "the workspace must be writable to continue a run" });
  }
  throw takenMeanwhile(options, null);
}

/** A takeover that could not fence the old holder off is withdrawn, so the next attempt judges that holder again. */
function fenceOrWithdraw(paths: RunPaths, generation: number): void {
  try {
    fenceJournal(paths.journal);
  } catch (err) {
    rmSync(recordPath(paths.lock, generation), { force: true });
    throw err;
  }
}

function ownerOf(reading: RecordReading | null): OwnerRecord | null {
  return reading?.record ?? null;
}

function takenMeanwhile(options: TakeOptions, generation: number | null): RunRefusedError {
  return new RunRefusedError(
    `Run ${options.runId} was taken by another process a moment ago${generation === null ? "" : ` (owner record ${generation})`}; ` +
      `wait for it to finish (\`delta list-runs -w ${options.workDir}\` shows the run's status), then continue it again if needed.`,
  );
}

/** Keeps the previous holder's record (it names who had the run) and this one; older ones are history. */
function removeOldGenerations(paths: RunPaths, previous: number): void {
  for (const generation of listGenerations(paths.lock).filter((g) => g < previous).reverse()) {
    rmSync(recordPath(paths.lock, generation), { force: true });
  }
}

function startHold(paths: RunPaths, generation: number, previous: RunHold["previous"]): RunHold {
  const own = recordPath(paths.lock, generation);
  const next = recordPath(paths.lock, generation + 1);
  const lostController = new AbortController();
  let lost: string | null = null;
  let released = false;
  // A later generation means the run was taken. Its own record is looked for every few seconds only: a newer holder
  // removes it two takeovers later, and by then the first one has fenced this process off the journal.
  const lostReason = (ownRecordToo = false): string | null => {
    if (lost === null && (existsSync(next) || (ownRecordToo && !existsSync(own)))) {
      lost = describeLoss(paths, generation);
      clearInterval(timer);
      lostController.abort(new Error(lost));
    }
    return lost;
  };
  const timer = setInterval(() => {
    if (lostReason(true) !== null) return;
    try {
      utimesSync(own, new Date(), new Date());
    } catch {
      // A missed refresh only lets the lock look stale sooner; the next tick tries again.
    }
  }, LOCK_REFRESH_MS);
  timer.unref();
  return {
    generation,
    previous,
    lostReason: () => lostReason(),
    lost: lostController.signal,
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      if (lostReason(true) !== null) return;
      const reading = readRecord(paths.lock, generation);
      if (reading?.record) {
        try {
          rewriteOwnRecord(paths.lock, { ...reading.record, released_at_unix: Date.now() });
        } catch {
          // Unreleased, the record still names this process: once it has exited, the next `continue` finds it gone.
        }
      }
    },
  };
}

function describeLoss(paths: RunPaths, generation: number): string {
  const next = readRecord(paths.lock, generation + 1)?.record;
  return next
    ? `process ${next.pid} on ${next.hostname} took it over${next.took_over ? ` (${next.took_over})` : ""}`
    : `its owner record ${recordPath(paths.lock, generation)} was replaced`;
}

/** The current holder's record as a reader sees it, for listing runs; null when no record exists. */
export function readCurrentOwner(paths: RunPaths): RecordReading | null {
  const current = listGenerations(paths.lock)[0];
  return current === undefined ? null : readRecord(paths.lock, current);
}
