// One writer per run: a proper-lockfile lock inside the run directory, refreshed while held and stale after 10 s.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import lockfile from "proper-lockfile";
import { z } from "zod";
import { RunRefusedError } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { appendEngineLog } from "./io-log.js";
import type { RunPaths } from "./run-dir.js";
import { readMetadata } from "./run-metadata.js";

export const LOCK_STALE_MS = 10_000;

export interface LockOptions {
  /** Told when the lock was lost while held (e.g. the machine slept past the stale period); default: engine.log. */
  onCompromised?: (message: string) => void;
}

/** Releases the lock; safe to call twice or after the lock was lost. */
export type ReleaseLock = () => Promise<void>;

export async function acquireRunLock(paths: RunPaths, options: LockOptions = {}): Promise<ReleaseLock> {
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(paths.runDir, {
      lockfilePath: paths.lock,
      stale: LOCK_STALE_MS,
      update: LOCK_STALE_MS / 2,
      realpath: false,
      retries: 0,
      // The default rethrows from a timer and kills the process; the journal stays consistent, so report it instead.
      onCompromised: (err) => reportCompromised(paths, options, `lost the lock on ${paths.runDir}: ${err.message}`),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOCKED") throw new RunRefusedError(describeHolder(paths));
    throw lockError(paths, err);
  }
  writeOwner(paths);
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    rmSync(ownerFile(paths), { force: true });
    await release().catch(() => undefined);
  };
}

const LockOwnerSchema = z.object({
  pid: z.number().int().positive(),
  hostname: z.string(),
  /** When the lock was taken (ms); the holder process started before it, so a newer process with its pid is not it. */
  locked_at_unix: z.number(),
});
export type LockOwner = z.infer<typeof LockOwnerSchema>;

/** Who holds the lock, as it recorded itself right after taking it; null when there is no record. */
export function readLockOwner(paths: RunPaths): LockOwner | null {
  try {
    const owner = LockOwnerSchema.safeParse(JSON.parse(readFileSync(ownerFile(paths), "utf8")));
    return owner.success ? owner.data : null;
  } catch {
    return null;
  }
}

/** Beside the lock, not in it: proper-lockfile removes a stale lock with rmdir, which a file inside would stop. */
function ownerFile(paths: RunPaths): string {
  return `${paths.lock}.owner`;
}

/** Written at once after the lock is taken, so a janitor can tell a dead holder's lock from a new holder's. */
function writeOwner(paths: RunPaths): void {
  try {
    writeFileSync(ownerFile(paths), `${JSON.stringify({ pid: process.pid, hostname: hostname(), locked_at_unix: Date.now() } satisfies LockOwner)}\n`);
  } catch {
    // Without the record the janitor only leaves this lock alone; it still goes stale after LOCK_STALE_MS.
  }
}

function reportCompromised(paths: RunPaths, options: LockOptions, message: string): void {
  try {
    if (options.onCompromised) options.onCompromised(message);
    else appendEngineLog(paths, `[warning] ${message}`);
  } catch {
    // Runs on a timer: throwing here would crash the process.
  }
}

/** For the janitor, once it has proven the holder dead: removes the lock whatever its age. */
export function forceBreakRunLock(paths: RunPaths): void {
  try {
    rmSync(paths.lock, { recursive: true, force: true });
    rmSync(ownerFile(paths), { force: true });
  } catch (err) {
    throw lockError(paths, err);
  }
}

function lockError(paths: RunPaths, err: unknown): Error {
  return fsError(`Cannot lock ${paths.runDir}`, err, { hint: "the workspace must be writable to continue a run" });
}

function describeHolder(paths: RunPaths): string {
  const runId = paths.runDir.split(/[\\/]/).pop() ?? paths.runDir;
  let holder = "another process";
  try {
    const metadata = readMetadata(paths);
    holder = `another process (pid ${metadata.pid} on ${metadata.hostname || "unknown host"})`;
  } catch {
    // Metadata may not be written yet by a holder that just claimed the run.
  }
  return `run ${runId} is being written by ${holder}; wait for it to finish. If that process is gone, its lock goes stale after ${LOCK_STALE_MS / 1000} s`;
}
