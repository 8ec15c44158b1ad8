// Walks a range of journal.jsonl in bounded chunks, line by line: no read holds more than a chunk and one line.
import { readSync } from "node:fs";

const NEWLINE = 0x0a;
/**
 * The longest line a journal may hold; the writer refuses longer events, the reader longer lines. DELTA_JOURNAL_MAX_LINE_BYTES
 * may only lower it (read here alone): a test proves with a few-MB journal that no reader holds more than a line and a chunk.
 */
export const MAX_LINE_BYTES = loweredLimit(process.env.DELTA_JOURNAL_MAX_LINE_BYTES, 64 << 20);
/** Bytes read from the file at a time: never more than a line may hold. */
const READ_CHUNK_BYTES = Math.min(1 << 20, MAX_LINE_BYTES);

function loweredLimit(given: string | undefined, limit: number): number {
  const bytes = given === undefined ? NaN : Number(given);
  return Number.isSafeInteger(bytes) && bytes > 0 && bytes < limit ? bytes : limit;
}

interface ScannedTail {
  /** Bytes after the last newline. */
  bytes: number;
  /** Those bytes, or null when there are more than MAX_LINE_BYTES of them (such a tail cannot be an event). */
  text: Buffer | null;
}

interface ScanResult {
  /** Newline-terminated lines seen. */
  lines: number;
  /** Offset (from `start`) just past the last newline: the bytes that form complete lines. */
  completeBytes: number;
  /** Offset (from `start`) where the last complete line begins, or -1 when there is none. */
  lastLineStart: number;
  tail: ScannedTail;
  bytesRead: number;
}

/**
 * Calls `visit` with each newline-terminated line of [start, end) (without its newline) and its offset from `start`;
 * a line longer than MAX_LINE_BYTES is passed as null (its length is `length`), never buffered. `line` shares memory
 * with the chunk it was read in, which is not reused: a caller keeping one line keeps at most that chunk alive.
 */
export function scanLines(fd: number, start: number, end: number, visit: (line: Buffer | null, offset: number, length: number) => void): ScanResult {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let oversize = false;
  let lineStart = 0;
  let lines = 0;
  let lastLineStart = -1;
  let bytesRead = 0;
  for (let position = start; position < end; ) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, end - position));
    const read = readSync(fd, chunk, 0, chunk.length, position);
    if (read === 0) break;
    bytesRead += read;
    const filled = chunk.subarray(0, read);
    let from = 0;
    for (let newline = filled.indexOf(NEWLINE, from); newline !== -1; newline = filled.indexOf(NEWLINE, from)) {
      const length = pendingBytes + newline - from;
      if (oversize || length > MAX_LINE_BYTES) visit(null, lineStart, length);
      else visit(pendingBytes === 0 ? filled.subarray(from, newline) : Buffer.concat([...pending, filled.subarray(from, newline)]), lineStart, length);
      lastLineStart = lineStart;
      lines += 1;
      lineStart = position - start + newline + 1;
      from = newline + 1;
      pending = [];
      pendingBytes = 0;
      oversize = false;
    }
    const rest = read - from;
    if (!oversize && pendingBytes + rest > MAX_LINE_BYTES) {
      oversize = true;
      pending = [];
    }
    if (!oversize && rest > 0) pending.push(filled.subarray(from));
    pendingBytes += rest;
    position += read;
  }
  return {
    lines,
    completeBytes: lineStart,
    lastLineStart,
    tail: { bytes: pendingBytes, text: oversize ? null : Buffer.concat(pending) },
    bytesRead,
  };
}

/** The bytes of [start, end), for ranges known to be small (a line, a prefix). */
export function readRange(fd: number, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  let filled = 0;
  while (filled < buffer.length) {
    const read = readSync(fd, buffer, filled, buffer.length - filled, start + filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}
