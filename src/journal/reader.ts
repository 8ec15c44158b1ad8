// Reads journal.jsonl into validated events, one at a time as each line is parsed: once through, or incrementally with the prefix already read verified each time.
import { closeSync, fstatSync, type Stats } from "node:fs";
import { JournalError, errorMessage } from "../errors.js";
import { openRunFile } from "../safe-open.js";
import type { JournalEvent } from "./events.js";
import type { FoldTracker } from "./fold.js";
import { MAX_LINE_BYTES, readRange } from "./line-scanner.js";
import { parseLine, refuseJsonArray, visitRange, type VisitedRange } from "./parse-lines.js";
import type { WrittenLines } from "./written-lines.js";

interface ReadOptions {
  /** Told about a torn last line that is being ignored. */
  warn?: (line: string) => void;
  /** Lines a writer in this process appended: met on disk unchanged, they are not parsed again. */
  written?: WrittenLines;
}

/** Where an incremental read hands the events it parses. */
export interface JournalSink {
  /** The file is read from its first line (the first read, or the file is not the one read before): forget every event handed over. */
  restart(): void;
  /** The next newline-terminated event, in order. */
  event(event: JournalEvent): void;
}

export interface JournalReader {
  /**
   * Hands `sink` each newline-terminated event appended since the last read, or every one after a restart (when the file
   * no longer begins with what was read, or `fromStart`), and keeps none; returns the event of a valid last line not yet
   * terminated, which a later read hands over again once it is. `quiet`: no warning about a torn last line, which a
   * later read still gives. A read that fails part-way leaves the next one to start over.
   */
  read(sink: JournalSink, options?: { quiet?: boolean; fromStart?: boolean }): JournalEvent | null;
  /** What the reads so far cost: bytes read from the file, lines parsed and reads that parsed it from its start, all cumulative. */
  cost(): ReadCost;
  /**
   * The newline-terminated prefix the last read verified, when the file open as `fd` still begins with it
   * (same device, inode and opening line, its last line unchanged): a writer of the same journal need not parse it again.
   */
  verifiedPrefixOf(fd: number): { bytes: number; lines: number } | null;
}

export interface ReadCost {
  bytesRead: number;
  linesParsed: number;
  /** Reads that found no verified prefix to start from, and so parsed the file from its first byte. */
  fullParses: number;
}

/** What the previous read learned about the file's newline-terminated prefix. */
interface VerifiedPrefix {
  dev: number;
  ino: number;
  bytes: number;
  lines: number;
  /** The first line (ENGINE_START) as read: a journal replaced by another run's cannot pass for this one. */
  openingLine: Buffer;
  lastLineStart: number;
  lastLine: Buffer;
}

/**
 * Hands every event now in the journal at `path` to `visit`, in order, and keeps none (a torn last line is left out with
 * a warning, as a whole read leaves it): a reader that folds or prints as it goes needs a line's memory, not a journal's.
 */
export function streamJournal(path: string, visit: (event: JournalEvent) => void, options: StreamOptions = {}): void {
  for (const _window of journalWindows(path, visit, options));
}

/**
 * streamJournal with an awaited `pause` after each window of lines: a consumer that sends what it folds to a slower
 * sink (a collector) holds a window's worth, never the journal.
 */
export async function streamJournalPaced(path: string, visit: (event: JournalEvent) => void, pause: () => Promise<void>, options: Pick<ReadOptions, "warn"> = {}): Promise<void> {
  for (const _window of journalWindows(path, visit, options)) await pause();
}

interface StreamOptions extends Pick<ReadOptions, "warn"> {
  /** Stop once the event of this seq was visited (at the end of its window: a few events after it may be visited too). */
  untilSeq?: number;
}

/** Journal bytes parsed between two pauses; a window widens (doubling) only to hold a line longer than this. */
const WINDOW_BYTES = 1 << 20;

/** Visits the journal's events a window of lines at a time, yielding between windows (never after the last). */
function* journalWindows(path: string, visit: (event: JournalEvent) => void, options: StreamOptions): Generator<void> {
  const fd = openJournalForRead(path);
  try {
    const size = fstatSync(fd).size;
    refuseJsonArray(path, readRange(fd, 0, 64));
    let start = 0;
    let line = 1;
    let window = WINDOW_BYTES;
    while (start < size) {
      const end = Math.min(size, start + window);
      const visited = visitRange(fd, start, end, { path, firstLine: line, nextSeq: line, endsMidFile: end < size }, visit);
      if (end === size) {
        if (visited.unterminated) visit(visited.unterminated);
        if (visited.tornBytes > 0) options.warn?.(tornWarning(path, visited.tornBytes));
        return;
      }
      // A window ending mid-line leaves that line to the next one; a window holding no whole line is widened, with no pause.
      if (visited.lines === 0) {
        window *= 2;
        continue;
      }
      window = WINDOW_BYTES;
      start += visited.completeBytes;
      line += visited.lines;
      // Line k holds event k.
      if (options.untilSeq !== undefined && line > options.untilSeq) return;
      yield;
    }
  } finally {
    closeSync(fd);
  }
}

/** Streams the journal at `path` through the folds registered on `tracker`. */
export function foldJournal(path: string, tracker: FoldTracker, options: Pick<ReadOptions, "warn"> = {}): void {
  streamJournal(path, (event) => tracker.see(event), options);
}

function tornWarning(path: string, bytes: number): string {
  return `${path}: ignoring a torn last line (${bytes} bytes with no newline, left by an interrupted write)`;
}

/** The journal's first event (ENGINE_START), without reading the rest; null when it has no complete first line. */
export function readFirstEvent(path: string): JournalEvent | null {
  const fd = openJournalForRead(path);
  try {
    const line = firstLineOf(fd);
    return line === null ? null : parseLine(line.subarray(0, -1).toString("utf8"), path, 1, 1);
  } finally {
    closeSync(fd);
  }
}

export function createJournalReader(path: string, options: ReadOptions = {}): JournalReader {
  let prefix: VerifiedPrefix | null = null;
  let warnedTornAt = -1;
  const spent: ReadCost = { bytesRead: 0, linesParsed: 0, fullParses: 0 };
  const readCounted = (fd: number, start: number, end: number): Buffer => {
    const bytes = readRange(fd, start, end);
    spent.bytesRead += bytes.length;
    return bytes;
  };

  function read(sink: JournalSink, { quiet = false, fromStart = false }: { quiet?: boolean; fromStart?: boolean } = {}): JournalEvent | null {
    const fd = openJournalForRead(path);
    try {
      const stats = fstatSync(fd);
      const from = !fromStart && prefix && prefixStillMatches(fd, stats, prefix, readCounted) ? prefix : null;
      const base = from?.bytes ?? 0;
      if (!from) {
        refuseJsonArray(path, readCounted(fd, 0, 64));
        spent.fullParses += 1;
        sink.restart();
      }
      // Until this read ends well, the events handed over are not a prefix the next read can build on.
      prefix = null;
      const visited = visitRange(fd, base, stats.size, { path, firstLine: (from?.lines ?? 0) + 1, nextSeq: (from?.lines ?? 0) + 1, written: options.written }, (event) => sink.event(event));
      spent.bytesRead += visited.bytesRead;
      spent.linesParsed += visited.lines + (visited.unterminated ? 1 : 0);
      if (visited.tornBytes > 0 && !quiet && warnedTornAt !== base + visited.completeBytes) {
        warnedTornAt = base + visited.completeBytes;
        options.warn?.(tornWarning(path, visited.tornBytes));
      }
      prefix = extendPrefix(fd, stats, from, visited);
      return visited.unterminated;
    } finally {
      closeSync(fd);
    }
  }

  function verifiedPrefixOf(fd: number): { bytes: number; lines: number } | null {
    if (prefix === null || !prefixStillMatches(fd, fstatSync(fd), prefix, readCounted)) return null;
    return { bytes: prefix.bytes, lines: prefix.lines };
  }

  return { read, cost: () => ({ ...spent }), verifiedPrefixOf };
}

function openJournalForRead(path: string): number {
  try {
    return openRunFile(path);
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

function extendPrefix(fd: number, stats: Stats, from: VerifiedPrefix | null, visited: VisitedRange): VerifiedPrefix | null {
  if (visited.lines === 0 || visited.lastLine === null) return from ?? emptyPrefix(stats);
  const base = from?.bytes ?? 0;
  const lines = (from?.lines ?? 0) + visited.lines;
  return {
    dev: stats.dev,
    ino: stats.ino,
    bytes: base + visited.completeBytes,
    lines,
    openingLine: from && from.bytes > 0 ? from.openingLine : lines === 1 ? Buffer.concat([visited.lastLine, NEWLINE]) : firstLineOf(fd)!,
    lastLineStart: base + visited.lastLineStart,
    lastLine: Buffer.concat([visited.lastLine, NEWLINE]),
  };
}

const NEWLINE = Buffer.from("\n");

/** The first line of the file, newline included, or null when there is no newline within MAX_LINE_BYTES. */
function firstLineOf(fd: number): Buffer | null {
  for (let length = 4096; ; length = Math.min(length * 4, MAX_LINE_BYTES + 1)) {
    const head = readRange(fd, 0, length);
    const newline = head.indexOf(0x0a);
    if (newline !== -1) return Buffer.from(head.subarray(0, newline + 1));
    if (head.length < length || length > MAX_LINE_BYTES) return null;
  }
}

function emptyPrefix(stats: Stats): VerifiedPrefix {
  return { dev: stats.dev, ino: stats.ino, bytes: 0, lines: 0, openingLine: Buffer.alloc(0), lastLineStart: 0, lastLine: Buffer.alloc(0) };
}
