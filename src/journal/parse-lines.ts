// Parses a chunk of journal.jsonl bytes into validated events, checking seq continuity line by line.
import { JournalError, errorMessage } from "../errors.js";
import { JournalEventSchema, type JournalEvent } from "./events.js";
import type { WrittenLines } from "./written-lines.js";

const NEWLINE = 0x0a;

export interface ParsePosition {
  /** The journal's path, named in every error. */
  path: string;
  /** 1-based line number of the chunk's first line. */
  firstLine: number;
  /** The seq the chunk's first event must carry. */
  nextSeq: number;
  /** Lines this process wrote, whose events need no second parse (see written-lines.ts). */
  written?: WrittenLines;
}

export interface ParsedChunk {
  /** Events of the chunk's newline-terminated lines. */
  events: JournalEvent[];
  /** Bytes of the chunk up to and including its last newline. */
  completeBytes: number;
  /** Where the last newline-terminated line starts, or -1 when the chunk has none. */
  lastLineStart: number;
  /** The event on an unterminated but valid last line, if any (not part of completeBytes). */
  unterminated: JournalEvent | null;
  /** Length of an unterminated last line that is not valid JSON: a torn write, to be ignored. */
  tornBytes: number;
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

export function parseChunk(chunk: Buffer, at: ParsePosition): ParsedChunk {
  const events: JournalEvent[] = [];
  let start = 0;
  let line = at.firstLine;
  let seq = at.nextSeq;
  let lastLineStart = -1;
  for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
    const text = chunk.toString("utf8", start, end);
    events.push(at.written?.take(text, seq) ?? parseLine(text, at.path, line, seq));
    lastLineStart = start;
    start = end + 1;
    line += 1;
    seq += 1;
  }
  const completeBytes = start;
  if (completeBytes === chunk.length) return { events, completeBytes, lastLineStart, unterminated: null, tornBytes: 0 };
  const tail = chunk.toString("utf8", completeBytes);
  if (!isJson(tail)) return { events, completeBytes, lastLineStart, unterminated: null, tornBytes: chunk.length - completeBytes };
  return { events, completeBytes, lastLineStart, unterminated: parseLine(tail, at.path, line, seq), tornBytes: 0 };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parseLine(text: string, path: string, line: number, expectedSeq: number): JournalEvent {
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
