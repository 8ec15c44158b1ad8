// Appends events to journal.jsonl: one write per event to an append-mode file, seq and timestamp assigned here.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { EngineError, errorMessage } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { redactSecrets, usableSecrets } from "../secrets.js";
import { JournalEventSchema, type JournalEvent, type NewEvent } from "./events.js";
import { MAX_LINE_BYTES, readRange } from "./line-scanner.js";
import { parseRange, refuseJsonArray } from "./parse-lines.js";
import type { WrittenLines } from "./written-lines.js";

export interface JournalWriter {
  /** Records one event and returns it as written. Throws EngineError when the disk refuses it. */
  append(event: NewEvent): JournalEvent;
  /** Flushes to disk; call before anything that depends on the events being recorded. */
  sync(): void;
  close(): void;
}

export interface OpenOptions {
  /** Told when a torn last line left by a crash is cut off. */
  warn?: (line: string) => void;
  /** Strings that must never reach the file (the API key): an event holding one is written with [REDACTED] in its place. */
  secrets?: readonly string[];
  /** Told every line this writer appends, for a reader of the same journal (see written-lines.ts). */
  written?: WrittenLines;
}

/** Told each line any journal writer of this process appends, exactly as written (`--format stream-json` prints them). */
export type AppendedLineListener = (line: string) => void;

let appendedLineListener: AppendedLineListener | null = null;

/** One listener per process (the CLI's stdout); returns a function that removes it. */
export function onAppendedLine(listener: AppendedLineListener): () => void {
  appendedLineListener = listener;
  return () => {
    if (appendedLineListener === listener) appendedLineListener = null;
  };
}

export async function openJournal(path: string, options: OpenOptions = {}): Promise<JournalWriter> {
  const fd = openForAppend(path);
  try {
    const nextSeq = repairTail(fd, path, options.warn) + 1;
    return createWriter(fd, path, nextSeq, fstatSync(fd).size, jsonForms(options.secrets ?? []), options.written);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function openForAppend(path: string): number {
  try {
    return openSync(path, "a+");
  } catch (err) {
    throw fsError(`Cannot open the journal ${path} for writing`, err);
  }
}

/** Validates the existing journal, cuts a torn last line, terminates a complete unterminated one; returns the last seq. */
function repairTail(fd: number, path: string, warn: OpenOptions["warn"]): number {
  const size = fstatSync(fd).size;
  if (size === 0) return 0;
  refuseJsonArray(path, readRange(fd, 0, 64));
  const parsed = parseRange(fd, 0, size, { path, firstLine: 1, nextSeq: 1 });
  if (parsed.tornBytes > 0) {
    ftruncateSync(fd, parsed.completeBytes);
    warn?.(`${path}: cut off a torn last line (${parsed.tornBytes} bytes with no newline, left by an interrupted write)`);
  }
  if (parsed.unterminated) {
    writeAll(fd, Buffer.from("\n"));
    return parsed.unterminated.seq;
  }
  return parsed.events.length;
}

/** Secrets as they appear inside a JSON string literal, so a serialized line can be checked for them cheaply. */
function jsonForms(secrets: readonly string[]): { raw: string; json: string }[] {
  return usableSecrets(secrets).map((secret) => ({ raw: secret, json: JSON.stringify(secret).slice(1, -1) }));
}

function createWriter(
  fd: number,
  path: string,
  firstSeq: number,
  initialSize: number,
  secrets: readonly { raw: string; json: string }[],
  written: WrittenLines | undefined,
): JournalWriter {
  let nextSeq = firstSeq;
  let size = initialSize;
  let closed = false;
  let broken: string | null = null;

  function append(event: NewEvent): JournalEvent {
    if (closed) throw new EngineError(`The journal ${path} is closed; cannot append a ${event.type} event`);
    if (broken) throw new EngineError(`The journal ${path} can no longer be written: ${broken}`);
    const checked = JournalEventSchema.safeParse({ seq: nextSeq, timestamp: new Date().toISOString(), ...event });
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new EngineError(`Engine bug: refusing to journal an invalid ${event.type} event (${issue?.path.join(".")}: ${issue?.message})`);
    }
    let recorded = checked.data;
    let line = JSON.stringify(recorded);
    if (secrets.some((secret) => line.includes(secret.json))) {
      // Only string values change, so the event keeps its shape.
      recorded = redactSecrets(recorded, secrets.map((secret) => secret.raw), { fields: false }) as JournalEvent;
      line = JSON.stringify(recorded);
    }
    const bytes = Buffer.from(`${line}\n`);
    if (bytes.length > MAX_LINE_BYTES) throw new EngineError(`Cannot journal a ${event.type} event of ${bytes.length} bytes: a journal line may hold at most ${MAX_LINE_BYTES} bytes`);
    try {
      writeAll(fd, bytes);
    } catch (err) {
      undoPartialWrite();
      throw fsError(`Cannot append to the journal ${path}`, err);
    }
    size += bytes.length;
    nextSeq += 1;
    written?.remember(line, recorded);
    appendedLineListener?.(line);
    return recorded;
  }

  /** A partial write would glue the next event to a fragment, so cut it; if that fails, refuse further appends. */
  function undoPartialWrite(): void {
    try {
      ftruncateSync(fd, size);
    } catch (err) {
      broken = `an earlier write failed and its fragment could not be removed (${errorMessage(err)})`;
    }
  }

  function sync(): void {
    if (closed) return;
    try {
      fsyncSync(fd);
    } catch (err) {
      throw fsError(`Cannot flush the journal ${path} to disk`, err);
    }
  }

  function close(): void {
    if (closed) return;
    closed = true;
    closeSync(fd);
  }

  return { append, sync, close };
}

function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}
