// One exec at a time per session: a proper-lockfile lock on the session directory that waiters retry.
import lockfile from "proper-lockfile";
import { errorMessage } from "../errors.js";
import { SessionError } from "./errors.js";

/** A holder killed with SIGKILL stops refreshing its lock; after this long others may take it over. */
const STALE_AFTER_MS = 10_000;
const RETRY_INTERVAL_MS = 100;

interface LockOptions {
  lockPath: string;
  /** How long to wait for another exec on the same session to finish. */
  waitMs: number;
  warn: (message: string) => void;
}

export async function withSessionLock<T>(sessionDir: string, options: LockOptions, work: () => Promise<T>): Promise<T> {
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(sessionDir, {
      lockfilePath: options.lockPath,
      stale: STALE_AFTER_MS,
      retries: {
        retries: Math.max(1, Math.ceil(options.waitMs / RETRY_INTERVAL_MS)),
        factor: 1,
        minTimeout: RETRY_INTERVAL_MS,
        maxTimeout: RETRY_INTERVAL_MS,
      },
      onCompromised: (err) => options.warn(`the session lock was lost while a command ran: ${errorMessage(err)}`),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOCKED") {
      throw new SessionError(`session ${sessionDir} is still busy with another command after waiting ${options.waitMs} ms; try again later`);
    }
    throw new SessionError(`cannot lock session ${sessionDir}: ${errorMessage(err)}`);
  }
  try {
    return await work();
  } finally {
    await release().catch((err: unknown) => options.warn(`could not release the session lock: ${errorMessage(err)}`));
  }
}
