// One writer per run: taking a run (a new generation of its owner record), proving it is still held, letting it go.
//
// Taking a run: read the highest generation N in `.lock/`, judge that holder (judge.ts: at once on this host, by
// watching its heartbeat elsewhere), then create generation N + 1 exclusively (owner-record.ts). Of any number of
// processes that judged N, exactly one creates N + 1; the others are refused. A holder that was not proven dead may
// still be running, so its journal is fenced off first (fence.ts). Before every journal write the holder checks
// that no later generation exists (RunHold.lostReason); every beat it bumps its record's heartbeat (heartbeat.ts) and
// checks that the record is still there.
import { existsSync, rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { RunRefusedError } from "../../errors.js";
import { fsError } from "../../fs-errors.js";
import { pausePoint } from "../../pause-point.js";
import { isMissingFile } from "../../safe-open.js";
import { judgeOwner, judgeWatched, type TakeoverVerdict } from "./judge.js";
import { fenceJournal } from "./fence.js";
import { keepOwnRecord } from "./heartbeat.js";
import { claimGeneration, heartbeatInterval, listGenerations, ownRecord, readRecord, recordPath, type OwnerRecord, type RecordReading, type ServerGroup, type ToolGroup } from "./owner-record.js";
import type { RunPaths } from "../run-dir.js";

/** A process's hold on a run. */
export interface RunHold {
  /** This hold's generation: the fencing token. */
  generation: number;
  /** How the previous holder was judged; null for a new run. */
  previous: (TakeoverVerdict & { owner: OwnerRecord | null }) | null;
  /** Why this process no longer owns the run, or null while it does. One file lookup: cheap enough for every write. */
  lostReason(): string | null;
  /** Aborted once the run is found taken from this process (by the heartbeat timer or any check). */
  lost: AbortSignal;
  /** Notes the process group of the tool just spawned (written at once), or with null that it ended (written at the next beat). */
  noteToolGroup(group: ToolGroup | null): void;
  /** Notes the process groups of the MCP servers this process started (written at once). */
  noteServerGroups(groups: ServerGroup[]): void;
  /** Marks this process's own record released, unless the run was taken from it; idempotent. */
  release(): void;
}

/** Writes generation 1 into a run directory that is not published yet, so the run appears already held. */
export function createFirstOwner(paths: RunPaths): OwnerRecord {
  const record = ownRecord(1, null);
  try {
    if (!claimGeneration(paths.lock, record)) throw new Error(`${paths.lock} already holds an owner record`);
  } catch (err) {
    throw fsError(`Cannot create the owner record in ${paths.lock}`, err);
  }
  return record;
}

/** The hold on a new run whose first owner record (`first`) this process wrote before publishing it. */
export function holdNewRun(paths: RunPaths, first: OwnerRecord): RunHold {
  return startHold(paths.lock, first, null);
}

/**
 * A lock of this process's own in a fresh `lockDir` (a budget ledger's holder record): generation 1, beating until
 * released. Whoever judges it dead takes generation 2, which fences this process off what the lock guarded.
 */
export function holdNewLock(lockDir: string): RunHold {
  const record = ownRecord(1, null);
  if (!claimGeneration(lockDir, record)) throw new Error(`${lockDir} already holds an owner record`);
  return startHold(lockDir, record, null);
}

interface TakeOptions {
  runId: string;
  workDir: string;
  force: boolean;
  /** Told what the janitor waits for (a holder's heartbeat), on stderr. */
  progress?: (line: string) => void;
  /** Aborting it stops a wait for a holder's heartbeat: the run is then not taken. */
  signal?: AbortSignal;
}

/** Takes an existing run for this process, or refuses (126) when another process holds it or took it first. */
export async function takeRun(paths: RunPaths, options: TakeOptions): Promise<RunHold> {
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const current = listGenerations(paths.lock)[0] ?? 0;
      const reading = current === 0 ? null : readRecord(paths.lock, current);
      // A record removed since the listing means a newer holder cleaned up after itself: look again.
      if (current !== 0 && reading === null) continue;
      const verdict = reading === null ? null : await judge(paths, current, reading, options);
      if (verdict === "look again") continue;
      pausePoint("lock-judged");
      const mine = ownRecord(current + 1, verdict && !verdict.released ? verdict.reason : null);
      if (!claimOrGone(paths, mine, options)) throw takenMeanwhile(options, current + 1);
      if (listGenerations(paths.lock)[0] !== mine.generation) {
        // Created over a generation a newer holder had already cleaned away: that holder owns the run, not us.
        rmSync(recordPath(paths.lock, mine.generation), { force: true });
        throw takenMeanwhile(options, mine.generation);
      }
      if (verdict?.fence) fenceOrWithdraw(paths, mine.generation);
      removeOldGenerations(paths, current);
      const hold = startHold(paths.lock, mine, verdict === null ? null : { ...verdict, owner: reading?.record ?? null });
      pausePoint("lock-held");
      return hold;
    }
  } catch (err) {
    if (err instanceof RunRefusedError) throw err;
    throw fsError(`Cannot take the lock of ${paths.runDir}`, err, { hint: "the workspace must be writable to continue a run" });
  }
  throw takenMeanwhile(options, null);
}

/** The janitor's verdict on generation `current`, after watching its heartbeat where the janitor asks to. */
async function judge(paths: RunPaths, current: number, reading: RecordReading, options: TakeOptions): Promise<TakeoverVerdict | "look again"> {
  const facts = { runId: options.runId, workDir: options.workDir, reading };
  const judgement = judgeOwner(facts, { force: options.force });
  if ("verdict" in judgement) return judgement.verdict;
  const { periodMs, holder } = judgement.watch;
  options.progress?.(`[Janitor] Run ${options.runId} is held by ${holder}: watching its heartbeat for ${Math.round(periodMs / 100) / 10} s`);
  await waitMonotonic(periodMs, options);
  const second = readRecord(paths.lock, current);
  // Released and cleaned up, or taken by another process meanwhile: judge the run as it is now.
  if (second === null || listGenerations(paths.lock)[0] !== current) return "look again";
  return judgeWatched(facts, second, periodMs);
}

/** Waits at least `ms` by this process's monotonic clock, which neither another host's clock nor a changed wall clock moves. */
async function waitMonotonic(ms: number, options: TakeOptions): Promise<void> {
  const start = performance.now();
  for (let left = ms; left > 0; left = ms - (performance.now() - start)) {
    try {
      await sleep(Math.ceil(left), undefined, { signal: options.signal });
    } catch {
      throw new RunRefusedError(`Interrupted while watching the heartbeat of run ${options.runId}'s holder: the run was not taken, and nothing was changed.`);
    }
  }
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

/** Claims the generation; a run whose folder went meanwhile (a prune removed it) is refused as gone, never re-created. */
function claimOrGone(paths: RunPaths, mine: OwnerRecord, options: TakeOptions): boolean {
  try {
    return claimGeneration(paths.lock, mine);
  } catch (err) {
    if (!isMissingFile(err)) throw err;
    throw new RunRefusedError(
      `Run ${options.runId} was removed (by \`delta prune\`, or by hand) while this process was taking it; nothing was changed. ` +
        `\`delta list-runs -w ${options.workDir}\` shows the runs that remain.`,
      { cause: err },
    );
  }
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

function startHold(lockDir: string, mine: OwnerRecord, previous: RunHold["previous"]): RunHold {
  const { generation } = mine;
  const own = recordPath(lockDir, generation);
  const next = recordPath(lockDir, generation + 1);
  const lostController = new AbortController();
  let lost: string | null = null;
  // A later generation means the run was taken. Its own record is looked for every beat only: a newer holder
  // removes it two takeovers later, and by then the first one has fenced this process off the journal.
  const lostReason = (ownRecordToo = false): string | null => {
    if (lost === null && (existsSync(next) || (ownRecordToo && !existsSync(own)))) {
      lost = describeLoss(lockDir, generation);
      clearInterval(timer);
      record.stop();
      lostController.abort(new Error(lost));
    }
    return lost;
  };
  const record = keepOwnRecord(lockDir, mine, () => lostReason(true) === null);
  // The heartbeat is a timer, not work done per iteration; unref'd, it never keeps the process alive.
  const timer = setInterval(() => {
    if (lostReason(true) === null) record.beat();
  }, mine.heartbeat_ms ?? heartbeatInterval());
  timer.unref();
  let released = false;
  return {
    generation,
    previous,
    lostReason: () => lostReason(),
    lost: lostController.signal,
    noteToolGroup: (group) => record.noteToolGroup(group),
    noteServerGroups: (groups) => record.noteServerGroups(groups),
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      if (lostReason(true) !== null) return;
      // Unreleased (a full disk), the record still names this process: once it has exited, the next `continue` finds it gone.
      record.markReleased();
    },
  };
}

function describeLoss(lockDir: string, generation: number): string {
  const next = readRecord(lockDir, generation + 1)?.record;
  return next
    ? `process ${next.pid} on ${next.hostname} took it over${next.took_over ? ` (${next.took_over})` : ""}`
    : `its owner record ${recordPath(lockDir, generation)} was replaced`;
}

/** The current holder's record as a reader sees it, for listing runs; null when no record exists. */
export function readCurrentOwner(paths: RunPaths): RecordReading | null {
  const current = listGenerations(paths.lock)[0];
  return current === undefined ? null : readRecord(paths.lock, current);
}
