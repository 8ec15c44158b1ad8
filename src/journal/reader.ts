// Reads journal.jsonl into validated events: once in full, or incrementally with the cached prefix verified each time.
import { closeSync, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { JournalError, errorMessage } from "../errors.js";
import type { JournalEvent } from "./events.js";
import { parseChunk, refuseJsonArray } from "./parse-lines.js";
import type { WrittenLines } from "./written-lines.js";

export interface ReadOptions {
  /** Told about a torn last line that is being ignored. */
  warn?: (line: string) => void;
  /** Lines a writer in this process appended: met on disk unchanged, they are not parsed again. */
  written?: WrittenLines;
}

export interface JournalReader {
  /** Every event now in the file; parses only bytes appended since the last call when the cache still matches. */
  read(): JournalEvent[];
  /** What the reads so far cost: bytes read from the file and lines parsed, both cumulative. */
  cost(): ReadCost;
}

export interface ReadCost {
  bytesRead: number;
  linesParsed: number;
}

/** What the previous read learned about the file's newline-terminated prefix. */
interface VerifiedPrefix {
  dev: number;
  ino: number;
  bytes: number;
  lines: number;
  events: JournalEvent[];
  /** The first line (ENGINE_START) as read: a journal replaced by another run's cannot pass for this one. */
  openingLine: Buffer;
  lastLineStart: number;
  lastLine: Buffer;
}

/** Reads the whole journal at `path`. */
export function readJournal(path: string, options: ReadOptions = {}): JournalEvent[] {
  return createJournalReader(path, options).read();
}

export function createJournalReader(path: string, options: ReadOptions = {}): JournalReader {
  let prefix: VerifiedPrefix | null = null;
  let warnedTornAt = -1;
  const spent: ReadCost = { bytesRead: 0, linesParsed: 0 };
  const readCounted = (fd: number, start: number, end: number): Buffer => {
    const bytes = readRange(fd, start, end);
    spent.bytesRead += bytes.length;
    return bytes;
  };

  function read(): JournalEvent[] {
    const fd = openJournalForRead(path);
    try {
      const stats = fstatSync(fd);
      const from = prefix && prefixStillMatches(fd, stats, prefix, readCounted) ? prefix : null;
      const chunk = readCounted(fd, from?.bytes ?? 0, stats.size);
      if (!from) refuseJsonArray(path, chunk.subarray(0, 64));
      const parsed = parseChunk(chunk, {
        path,
        firstLine: (from?.lines ?? 0) + 1,
        nextSeq: (from?.events.length ?? 0) + 1,
        written: options.written,
      });
      spent.linesParsed += parsed.events.length + (parsed.unterminated ? 1 : 0);
      const base = from?.bytes ?? 0;
      if (parsed.tornBytes > 0 && warnedTornAt !== base + parsed.completeBytes) {
        warnedTornAt = base + parsed.completeBytes;
        options.warn?.(`${path}: ignoring a torn last line (${parsed.tornBytes} bytes with no newline, left by an interrupted write)`);
      }
      prefix = extendPrefix(stats, from, chunk, parsed);
      const events = prefix ? [...prefix.events] : [];
      if (parsed.unterminated) events.push(parsed.unterminated);
      return events;
    } finally {
      closeSync(fd);
    }
  }

  return { read, cost: () => ({ ...spent }) };
}

function openJournalForRead(path: string): number {
  try {
    return openSync(path, "r");
  } catch (err) {
    throw new JournalError(`${path}: cannot open the journal (${errorMessage(err)})`, { cause: err });
  }
}

type RangeReader = (fd: number, start: number, end: number) => Buffer;

function prefixStillMatches(fd: number, stats: Stats, prefix: VerifiedPrefix, read: RangeReader): boolean {
  if (stats.dev !== prefix.dev || stats.ino !== prefix.ino || stats.size < prefix.bytes) return false;
  if (prefix.bytes === 0) return true;
  const lastLine = read(fd, prefix.lastLineStart, prefix.bytes);
  if (!lastLine.equals(prefix.lastLine)) return false;
  return read(fd, 0, prefix.openingLine.length).equals(prefix.openingLine);
}

function extendPrefix(
  stats: Stats,
  from: VerifiedPrefix | null,
  chunk: Buffer,
  parsed: ReturnType<typeof parseChunk>,
): VerifiedPrefix | null {
  if (parsed.events.length === 0) return from ?? emptyPrefix(stats);
  const base = from?.bytes ?? 0;
  return {
    dev: stats.dev,
    ino: stats.ino,
    bytes: base + parsed.completeBytes,
    lines: (from?.lines ?? 0) + parsed.events.length,
    events: appendInPlace(from?.events ?? [], parsed.events),
    openingLine: from && from.bytes > 0 ? from.openingLine : Buffer.from(chunk.subarray(0, chunk.indexOf(0x0a) + 1)),
    lastLineStart: base + parsed.lastLineStart,
    lastLine: Buffer.from(chunk.subarray(parsed.lastLineStart, parsed.completeBytes)),
  };
}

/** The cache owns its array, so growing it in place keeps each read O(new events). */
function appendInPlace(target: JournalEvent[], added: JournalEvent[]): JournalEvent[] {
  for (const event of added) target.push(event);
  return target;
}

function emptyPrefix(stats: Stats): VerifiedPrefix {
  return { dev: stats.dev, ino: stats.ino, bytes: 0, lines: 0, events: [], openingLine: Buffer.alloc(0), lastLineStart: 0, lastLine: Buffer.alloc(0) };
}

function readRange(fd: number, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  let filled = 0;
  while (filled < buffer.length) {
    const read = readSync(fd, buffer, filled, buffer.length - filled, start + filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}
