// Parses a range of journal.jsonl into validated events, checking seq continuity line by line.
import { JournalError, errorMessage } from "../errors.js";
import { JournalEventSchema, type JournalEvent } from "./events.js";
import { MAX_LINE_BYTES, scanLines } from "./line-scanner.js";
import type { WrittenLines } from "./written-lines.js";

interface ParsePosition {
  /** The journal's path, named in every error. */
  path: string;
  /** 1-based line number of the range's first line. */
  firstLine: number;
  /** The seq the range's first event must carry. */
  nextSeq: number;
  /** Lines this process wrote, whose events need no second parse (see written-lines.ts). */
  written?: WrittenLines;
  /** The range ends before the file does: bytes after its last newline begin a line the next range reads, and are not looked at. */
  endsMidFile?: boolean;
}

interface ParsedRange extends VisitedRange {
  /** Events of the range's newline-terminated lines. */
  events: JournalEvent[];
}

export interface VisitedRange {
  /** Newline-terminated lines of the range (each one event). */
  lines: number;
  /** Bytes of the range up to and including its last newline. */
  completeBytes: number;
  /** Where the last newline-terminated line starts (from the range's start), or -1 when the range has none. */
  lastLineStart: number;
  /** That line's bytes (without its newline), or null when there is none. */
  lastLine: Buffer | null;
  /** The event on an unterminated but valid last line, if any (not part of completeBytes). */
  unterminated: JournalEvent | null;
  /** Length of an unterminated last line that is not an event: a torn write, to be ignored. */
  tornBytes: number;
  bytesRead: number;
}

/** A journal rewritten by an editor as one JSON array is refused with the reason. */
export function refuseJsonArray(path: string, firstBytes: Buffer): void {
  if (firstBytes.toString("utf8").trimStart().startsWith("[")) {
    throw new JournalError(
      `${path}: the file is one JSON array, but a journal must be JSONL (one event object per line). ` +
        "It was probably rewritten by an editor plugin; restore it from a backup and inspect journals with cat, less or jq only.",
    );
  }
}

/** Parses the lines of [start, end) of an open journal, reading it in bounded chunks. */
export function parseRange(fd: number, start: number, end: number, at: ParsePosition): ParsedRange {
  const events: JournalEvent[] = [];
  const visited = visitRange(fd, start, end, at, (event) => events.push(event));
  return { ...visited, events };
}

/**
 * Hands each event of the newline-terminated lines of [start, end) to `visit` as it is parsed, keeping none: the reader
 * of a journal of any size. A line, or what `visit` makes of it, too long for one string fails naming the file and line.
 */
export function visitRange(fd: number, start: number, end: number, at: ParsePosition, visit: (event: JournalEvent, line: number) => void): VisitedRange {
  let count = 0;
  const last: { line: Buffer | null } = { line: null };
  const scan = scanLines(fd, start, end, (bytes, _offset, length) => {
    const line = at.firstLine + count;
    if (bytes === null) throw new JournalError(`${at.path} line ${line}: ${length} bytes, more than the ${MAX_LINE_BYTES} bytes a journal line may hold`);
    const seq = at.nextSeq + count;
    withinStringLimit(at.path, line, () => visit(at.written?.take(bytes.toString("utf8"), seq) ?? parseLine(bytes.toString("utf8"), at.path, line, seq), line));
    count += 1;
    last.line = bytes;
  });
  const visited = { lines: count, completeBytes: scan.completeBytes, lastLineStart: scan.lastLineStart, lastLine: last.line === null ? null : Buffer.from(last.line), bytesRead: scan.bytesRead };
  const tail = scan.tail;
  if (tail.bytes === 0 || at.endsMidFile) return { ...visited, unterminated: null, tornBytes: 0 };
  const text = tail.text?.toString("utf8");
  if (text === undefined || !isJson(text)) return { ...visited, unterminated: null, tornBytes: tail.bytes };
  return { ...visited, unterminated: parseLine(text, at.path, at.firstLine + count, at.nextSeq + count), tornBytes: 0 };
}

/** V8 refuses a string over its limit with a bare "Invalid string length": said here with the journal line it came from. */
function withinStringLimit(path: string, line: number, work: () => void): void {
  try {
    work();
  } catch (err) {
    if (err instanceof RangeError && /string length/i.test(err.message)) {
      throw new JournalError(`${path} line ${line}: the event is too large to hold as one string (${err.message}); read that line with a streaming tool such as jq --stream`, { cause: err });
    }
    throw err;
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function parseLine(text: string, path: string, line: number, expectedSeq: number): JournalEvent {
  const where = `${path} line ${line}`;
  if (text.trim() === "") throw new JournalError(`${where}: empty line; every line of a journal must hold one event`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new JournalError(`${where}: not valid JSON (${errorMessage(err)})`);
  }
  const result = JournalEventSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(event)";
    throw new JournalError(`${where}: field "${field}": ${issue?.message ?? "invalid event"}`);
  }
  if (result.data.seq !== expectedSeq) {
    throw new JournalError(
      `${where}: seq ${result.data.seq} where ${expectedSeq} was expected; events must be numbered 1, 2, 3… with no gaps`,
    );
  }
  return result.data;
}
