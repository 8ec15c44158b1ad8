// The owner records of a run, `.lock/<generation>.json`: one per process that held the run, the highest is the holder.
//
// A record is written whole to a temporary name and linked to its generation's name: link() fails when the name
// exists, so exactly one process can create each generation, and no reader ever sees a lock without its record.
// Its holder rewrites it (a temporary file renamed over it) with every heartbeat, and overwrites it in place, at the same
// size, to note a tool it spawned; readers only ever open and read it.
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, readdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { openRunFile } from "../../safe-open.js";
import { createExclusive } from "../exclusive-file.js";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ownStartTicks } from "../../process/proc-stat.js";
import { randomHex } from "../../random-hex.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../../private-modes.js";
import { thisHost } from "../../process/host-probe.js";

const OWNER_RECORD_VERSION = 1;

/** The running tool's process group, noted the moment it is spawned, so a later holder on the same host can end what is left of it. */
const ToolGroupSchema = z.object({
  /** seq of the ACTION_REQUEST the tool runs for. */
  request_seq: z.number().int().positive(),
  pgid: z.number().int().positive(),
  /** When it was spawned (Unix ms, the holder's clock): a group whose leader started much later is not it. */
  started_at_unix: z.number().nonnegative(),
});
export type ToolGroup = z.infer<typeof ToolGroupSchema>;

/** An MCP stdio server's process group, noted once the servers have started, so a later holder can end what a dead one left. */
const ServerGroupSchema = z.object({
  server: z.string(),
  pgid: z.number().int().positive(),
  /** When its leader started (Unix ms, by /proc on the holder's host): a group whose leader started at another time is not it. */
  started_at_unix: z.number().nonnegative(),
});
export type ServerGroup = z.infer<typeof ServerGroupSchema>;

export const OwnerRecordSchema = z.looseObject({
  version: z.literal(OWNER_RECORD_VERSION),
  /** The fencing token: one more than the generation this holder followed. It only grows. */
  generation: z.number().int().positive(),
  /** Bumped by the holder every heartbeat_ms: a reader that sees it stand still for five beats by its own clock may take over. */
  heartbeat: z.number().int().nonnegative().optional(),
  heartbeat_ms: z.number().int().positive().optional(),
  pid: z.number().int().positive(),
  hostname: z.string(),
  // The host, told apart by machine, boot and PID namespace (host-identity.ts): only there can the pid be checked.
  machine_id: z.string().nullable().optional(),
  boot_id: z.string().nullable().optional(),
  pid_namespace: z.string().nullable().optional(),
  /** The holder's start in clock ticks after boot (/proc): a process with its pid and another start is not it. */
  start_ticks: z.number().int().nonnegative().nullable().optional(),
  /** When this hold began (Unix ms); the holder process started before it, so a later process with its pid is not it. */
  acquired_at_unix: z.number().nonnegative(),
  /** Set by a clean release: the next process may take the run at once. */
  released_at_unix: z.number().nonnegative().nullable(),
  /** How the previous holder was judged when this one took the run over; null after a release or for a new run. */
  took_over: z.string().nullable(),
  tool_group: ToolGroupSchema.nullable().optional(),
  /** Absent from records written before servers were noted here; metadata.json's mcp_server_processes names them then. */
  server_groups: z.array(ServerGroupSchema).optional(),
});
export type OwnerRecord = z.infer<typeof OwnerRecordSchema>;

/** What a record on disk says, with its text exactly as read: two readings with the same text saw no heartbeat between them. */
export type RecordReading = { record: OwnerRecord; text: string } | { record: null; text: string; problem: string };

/** A record is padded to a multiple of this, and keeps its size while its holder rewrites it (see paddedRecord). */
const RECORD_BLOCK = 512;
/** Room left at the claim for what a holder adds later: a released time, a tool group, a server or two, a longer counter. */
const RECORD_SLACK = 256;
/** No record is this long; a bigger file is not read whole. */
const MAX_RECORD_BYTES = 64 * 1024;

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

/** How often a holder bumps its heartbeat: DELTA_HEARTBEAT_MS (100 ms to 10 min), 2 s by default. */
export function heartbeatInterval(env: NodeJS.ProcessEnv = process.env): number {
  const asked = Number(env.DELTA_HEARTBEAT_MS);
  return Number.isInteger(asked) && asked >= 100 && asked <= 600_000 ? asked : DEFAULT_HEARTBEAT_MS;
}
const DEFAULT_HEARTBEAT_MS = 2_000;

/** A record for this process taking `generation`. */
export function ownRecord(generation: number, tookOver: string | null): OwnerRecord {
  return {
    version: OWNER_RECORD_VERSION,
    generation,
    heartbeat: 0,
    heartbeat_ms: heartbeatInterval(),
    pid: process.pid,
    hostname: hostname(),
    ...thisHost(),
    start_ticks: ownStartTicks(),
    acquired_at_unix: Date.now(),
    released_at_unix: null,
    took_over: tookOver,
    tool_group: null,
    server_groups: [],
  };
}

/** Reads generation `generation`'s record (open and read, never stat: a network file system may cache attributes); null when it no longer exists. */
export function readRecord(lockDir: string, generation: number): RecordReading | null {
  const path = recordPath(lockDir, generation);
  let text: string;
  try {
    text = readBounded(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  return parseRecord(path, generation, text);
}

function parseRecord(path: string, generation: number, text: string): RecordReading {
  if (text.length > MAX_RECORD_BYTES) return { record: null, text, problem: `${path}: longer than ${MAX_RECORD_BYTES} bytes, not an owner record` };
  try {
    const parsed = OwnerRecordSchema.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.generation === generation) return { record: parsed.data, text };
    const issue = parsed.success ? `generation ${parsed.data.generation} in the file named ${generation}` : `${parsed.error.issues[0]?.path.join(".") || "(record)"}: ${parsed.error.issues[0]?.message}`;
    return { record: null, text, problem: `${path}: ${issue}` };
  } catch (err) {
    return { record: null, text, problem: `${path}: not valid JSON (${(err as Error).message})` };
  }
}

/** Up to MAX_RECORD_BYTES + 1 bytes, read until end of file rather than trusting a size from fstat. */
function readBounded(path: string): string {
  const fd = openRunFile(path);
  try {
    const buffer = Buffer.alloc(MAX_RECORD_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, length);
      if (read === 0) break;
      length += read;
    }
    return buffer.toString("utf8", 0, length);
  } finally {
    closeSync(fd);
  }
}

/**
 * A record's bytes: its JSON padded with spaces to `size` (or the least multiple of RECORD_BLOCK that holds it with
 * RECORD_SLACK to spare). A holder keeps one size for all its rewrites, so a reader through a file system that caches
 * a file's size (sshfs, FUSE) never has a fresh read cut short at a stale length.
 */
export function paddedRecord(record: OwnerRecord, size = 0): string {
  // Typed by construction (ownRecord and its holder's updates): not parsed again, as it is written once per tool.
  const json = JSON.stringify(record);
  const least = json.length + 1 > size ? Math.ceil((json.length + 1 + RECORD_SLACK) / RECORD_BLOCK) * RECORD_BLOCK : size;
  return `${json}${" ".repeat(least - json.length - 1)}\n`;
}

/**
 * Creates `record`'s generation exclusively: true when this call created it, false when it already existed. The run's
 * folder must exist: a run removed meanwhile (by prune) is never re-created here; that throws ENOENT.
 */
export function claimGeneration(lockDir: string, record: OwnerRecord): boolean {
  try {
    mkdirSync(lockDir, { mode: PRIVATE_DIR_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return createExclusive(lockDir, `${record.generation}.json`, paddedRecord(record));
}

/**
 * Replaces this process's own record with `text` (a paddedRecord) if `mayWrite()` still holds once the new text is
 * written, right before the rename (so a loss found while writing stops it); never called for another holder's generation.
 */
export function rewriteOwnRecord(lockDir: string, generation: number, text: string, durable: boolean, mayWrite: () => boolean): void {
  const temp = writeTemp(lockDir, generation, text, durable);
  let renamed = false;
  try {
    if (mayWrite()) {
      renameSync(temp, recordPath(lockDir, generation));
      renamed = true;
    }
  } finally {
    if (!renamed) rmSync(temp, { force: true });
  }
}

/**
 * Overwrites this process's own record in place with `text`, exactly as long as the record on disk (paddedRecord keeps
 * one size): one small write, no new file and no rename. Never creates the file: a record a later holder removed stays
 * removed. A reader racing the write may read a torn record, which it takes as changed or unreadable, never as dead.
 */
export function overwriteOwnRecord(lockDir: string, generation: number, text: string): void {
  const fd = openSync(recordPath(lockDir, generation), "r+");
  try {
    writeSync(fd, text, 0);
  } finally {
    closeSync(fd);
  }
}

/** A temporary name beside the record, unique to this process and call, hidden from listGenerations. */
export function recordTempPath(lockDir: string, generation: number): string {
  return join(lockDir, `.${generation}.${process.pid}.${randomHex(4)}.tmp`);
}

function writeTemp(lockDir: string, generation: number, text: string, durable: boolean): string {
  const temp = recordTempPath(lockDir, generation);
  const fd = openSync(temp, "wx", PRIVATE_FILE_MODE);
  try {
    writeSync(fd, text);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}
