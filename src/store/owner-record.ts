// The owner records of a run, `.lock/<generation>.json`: one per process that held the run, the highest is the holder.
//
// A record is written whole to a temporary name and linked to its generation's name: link() fails when the name
// exists, so exactly one process can create each generation, and no reader ever sees a lock without its record.
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { randomHex } from "../random-hex.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../private-modes.js";

export const OWNER_RECORD_VERSION = 1;

export const OwnerRecordSchema = z.looseObject({
  version: z.literal(OWNER_RECORD_VERSION),
  /** The fencing token: one more than the generation this holder followed. It only grows. */
  generation: z.number().int().positive(),
  pid: z.number().int().positive(),
  hostname: z.string(),
  /** When this hold began (Unix ms); the holder process started before it, so a later process with its pid is not it. */
  acquired_at_unix: z.number().nonnegative(),
  /** Set by a clean release: the next process may take the run at once. */
  released_at_unix: z.number().nonnegative().nullable(),
  /** How the previous holder was judged when this one took the run over; null after a release or for a new run. */
  took_over: z.string().nullable(),
  // Room for liveness across hosts, judged by a later version: a counter the holder bumps, and the host's identity.
  heartbeat: z.number().int().nonnegative().optional(),
  machine_id: z.string().optional(),
  boot_id: z.string().optional(),
});
export type OwnerRecord = z.infer<typeof OwnerRecordSchema>;

/** What a record on disk says, with its age by its modification time (refreshed while held). */
export type RecordReading = { record: OwnerRecord; ageMs: number } | { record: null; ageMs: number; problem: string };

export function recordPath(lockDir: string, generation: number): string {
  return join(lockDir, `${generation}.json`);
}

/** The generations present in `lockDir`, highest first; none when there is no lock directory yet. */
export function listGenerations(lockDir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(lockDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const generations: number[] = [];
  for (const name of names) {
    const match = /^([1-9][0-9]{0,15})\.json$/.exec(name);
    if (match) generations.push(Number(match[1]));
  }
  return generations.sort((a, b) => b - a);
}

/** A record for this process taking `generation`. */
export function ownRecord(generation: number, tookOver: string | null): OwnerRecord {
  return { version: OWNER_RECORD_VERSION, generation, pid: process.pid, hostname: hostname(), acquired_at_unix: Date.now(), released_at_unix: null, took_over: tookOver };
}

/** Reads generation `generation`'s record; null when it no longer exists. */
export function readRecord(lockDir: string, generation: number): RecordReading | null {
  const path = recordPath(lockDir, generation);
  let text: string;
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(path).mtimeMs;
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    const parsed = OwnerRecordSchema.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.generation === generation) return { record: parsed.data, ageMs };
    const issue = parsed.success ? `generation ${parsed.data.generation} in the file named ${generation}` : `${parsed.error.issues[0]?.path.join(".") || "(record)"}: ${parsed.error.issues[0]?.message}`;
    return { record: null, ageMs, problem: `${path}: ${issue}` };
  } catch (err) {
    return { record: null, ageMs, problem: `${path}: not valid JSON (${(err as Error).message})` };
  }
}

/** Creates `record`'s generation exclusively: true when this call created it, false when it already existed. */
export function claimGeneration(lockDir: string, record: OwnerRecord): boolean {
  mkdirSync(lockDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const temp = writeTemp(lockDir, record);
  try {
    linkSync(temp, recordPath(lockDir, record.generation));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    // Over NFS a link can succeed and still report an error (its reply was lost): the temp file's link count tells.
    if (statSync(temp).nlink === 2) return true;
    throw err;
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Replaces this process's own record (e.g. marked released); never called for another holder's generation. */
export function rewriteOwnRecord(lockDir: string, record: OwnerRecord): void {
  const temp = writeTemp(lockDir, record);
  try {
    renameSync(temp, recordPath(lockDir, record.generation));
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

function writeTemp(lockDir: string, record: OwnerRecord): string {
  const temp = join(lockDir, `.${record.generation}.${process.pid}.${randomHex(4)}.tmp`);
  const fd = openSync(temp, "wx", PRIVATE_FILE_MODE);
  try {
    writeSync(fd, `${JSON.stringify(OwnerRecordSchema.parse(record))}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}
