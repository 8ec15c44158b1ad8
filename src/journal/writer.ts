// Appends events to journal.jsonl: one write per event to an append-mode file, seq, timestamp and the chain's hash assigned here.
import { fstatSync, statSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import { EngineError, OwnershipLostError } from "../errors.js";
import { pausePoint } from "../pause-point.js";
import { redactSecrets, usableSecrets, type RunSecrets } from "../secrets.js";
import { chainTip, hashedLine } from "./chain.js";
import { eventCheck } from "./event-checks.js";
import type { EventOf, JournalEvent, NewEvent } from "./events.js";
import { openJsonlAppender, type JsonlAppender, type KeptTail } from "./jsonl-appender.js";
import { MAX_LINE_BYTES, readRange } from "./line-scanner.js";
import { parseRange, refuseJsonArray } from "./parse-lines.js";
import type { JournalReader } from "./reader.js";

export interface JournalWriter {
  /** Records one event and returns it as written. Throws EngineError when the disk refuses it, OwnershipLostError when the run is no longer this process's. */
  append<E extends NewEvent>(event: E): EventOf<E["type"]>;
  /** Flushes to disk, then checks the run is still this process's; call before anything that depends on the events being recorded. */
  sync(): void;
  /** Throws OwnershipLostError when this process may no longer write the run. */
  verify(): void;
  /** Why this writer stopped for good (the run is no longer this process's), or null. */
  lostReason(): string | null;
  /** The hash of the journal's last line: what the next event chains to (journal/chain.ts). */
  head(): string;
  /** The journal's directory was renamed (a staged run published): the file this writer has open is at `path` now. */
  moved(path: string): void;
  close(): void;
}

interface OpenOptions {
  /** Told when a torn last line left by a crash is cut off. */
  warn?: (line: string) => void;
  /** Strings that must never reach the file (the API key): an event holding one is written with [REDACTED] in its place. Required: only secrets.ts makes the type. */
  secrets: RunSecrets;
  /** A reader of this journal in this process: the prefix it verified is not parsed again to find the tail. */
  reader?: Pick<JournalReader, "verifiedPrefixOf">;
  /** Told each event this writer appends, as recorded and as its line (without the newline): the one subscription of the run's files (store/run-files.ts). */
  appended?: (event: JournalEvent, line: string) => void;
  /** Why this process no longer owns the run, or null while it does; asked before every write (see store/lease/take-run.ts). */
  owner?: () => string | null;
}

export async function openJournal(path: string, options: OpenOptions): Promise<JournalWriter> {
  let lastSeq = 0;
  const file = openJsonlAppender(path, "the journal", (fd, size) => {
    const tail = existingTail(fd, size, path, options.warn, options.reader?.verifiedPrefixOf(fd) ?? null);
    lastSeq = tail.lastSeq;
    return tail;
  });
  return createWriter(file, path, lastSeq + 1, jsonForms(options.secrets), options);
}

/**
 * Validates the existing journal after the prefix a reader already verified (all of it without one): what of it stands
 * (a torn last line is cut, a complete unterminated one terminated) and its last seq.
 */
function existingTail(fd: number, size: number, path: string, warn: OpenOptions["warn"], verified: { bytes: number; lines: number } | null): KeptTail & { lastSeq: number } {
  if (size === 0) return { bytes: 0, lastSeq: 0 };
  const from = verified ?? { bytes: 0, lines: 0 };
  if (from.bytes === size) return { bytes: size, lastSeq: from.lines };
  if (from.bytes === 0) refuseJsonArray(path, readRange(fd, 0, 64));
  const parsed = parseRange(fd, from.bytes, size, { path, firstLine: from.lines + 1, nextSeq: from.lines + 1 });
  if (parsed.tornBytes > 0) warn?.(`${path}: cut off a torn last line (${parsed.tornBytes} bytes with no newline, left by an interrupted write)`);
  if (parsed.unterminated) return { bytes: size, terminate: true, lastSeq: parsed.unterminated.seq };
  return { bytes: from.bytes + parsed.completeBytes, lastSeq: from.lines + parsed.events.length };
}

/** Secrets as they appear inside a JSON string literal, so a serialized line can be checked for them cheaply. */
function jsonForms(secrets: readonly string[]): { raw: string; json: string }[] {
  return usableSecrets(secrets).map((secret) => ({ raw: secret, json: JSON.stringify(secret).slice(1, -1) }));
}

function createWriter(file: JsonlAppender, openedAt: string, firstSeq: number, secrets: readonly { raw: string; json: string }[], options: OpenOptions): JournalWriter {
  let nextSeq = firstSeq;
  let path = openedAt;
  // What is kept of the journal (a torn tail cut, an unterminated line terminated) is what the first event chains to.
  let head = chainTip(file.fd, file.size);
  const opened = fstatSync(file.fd);
  let closed = false;
  let lost: string | null = null;
  const runId = (): string => basename(dirname(path));

  /**
   * The file this writer has open must be at the size it left it, the run still ours and, unless a write is about to
   * follow (whose own check comes after it), still the file at `path`.
   */
  function ownershipProblem(beforeWrite: boolean): string | null {
    const mine = fstatSync(file.fd);
    if (mine.size !== file.size) return `the journal changed under it (${mine.size} bytes where this process wrote ${file.size}): another process wrote it`;
    if (!beforeWrite && !isSameFile(opened)) return REPLACED;
    return options.owner?.() ?? null;
  }

  function isSameFile(stats: Stats): boolean {
    try {
      const current = statSync(path);
      return current.ino === stats.ino && current.dev === stats.dev;
    } catch {
      return false;
    }
  }

  function verify(beforeWrite = false): void {
    if (lost === null) lost = ownershipProblem(beforeWrite);
    if (lost !== null) throw OwnershipLostError.of(runId(), lost);
  }

  function append<E extends NewEvent>(event: E): EventOf<E["type"]> {
    if (closed) throw new EngineError(`The journal ${path} is closed; cannot append a ${event.type} event`);
    verify(true);
    // A hash the event was given (one read back from a journal) is never kept: the writer chains it itself.
    let recorded: object = { seq: nextSeq, timestamp: new Date().toISOString(), ...event, hash: undefined };
    const problem = eventProblem(event.type, recorded);
    if (problem !== null) throw new EngineError(`Engine bug: refusing to journal an invalid ${event.type} event (${problem})`);
    let line = JSON.stringify(recorded);
    if (secrets.some((secret) => line.includes(secret.json))) {
      // Only string values change, so the event keeps its shape.
      recorded = redactSecrets(recorded, secrets.map((secret) => secret.raw), { fields: false }) as object;
      line = JSON.stringify(recorded);
    }
    // Hashed as it is written, secrets already out: the hash is the line's last member.
    const chained = hashedLine(line, head);
    const bytes = Buffer.from(`${chained.line}\n`);
    if (bytes.length > MAX_LINE_BYTES) throw new EngineError(`Cannot journal a ${event.type} event of ${bytes.length} bytes: a journal line may hold at most ${MAX_LINE_BYTES} bytes`);
    pausePoint("journal-append", event.type);
    file.append(bytes);
    // Written to a journal that was replaced (before or during the write): it reached no one, and this process must stop.
    if (!isSameFile(opened)) {
      lost = REPLACED;
      verify();
    }
    nextSeq += 1;
    head = chained.hash;
    // The check passed it: an event of the type given, now the journal's (the written-lines cache freezes it).
    const written = { ...recorded, hash: chained.hash } as EventOf<E["type"]>;
    options.appended?.(written, chained.line);
    return written;
  }

  function sync(): void {
    if (closed) return;
    file.sync();
    verify();
  }

  function close(): void {
    if (closed) return;
    closed = true;
    file.close();
  }

  function moved(to: string): void {
    const previous = path;
    path = to;
    if (!isSameFile(opened)) {
      path = previous;
      throw new EngineError(`Engine bug: ${to} is not the journal this process opened as ${previous}`);
    }
    file.moved(to);
  }

  return { append, sync, verify: () => verify(), lostReason: () => lost, head: () => head, moved, close };
}

const REPLACED = "the journal was replaced: another process took the run over";

/** Why `event` is not one of `type` as the journal writes it (the first field that fails, and how), or null when it is. */
function eventProblem(type: string, event: object): string | null {
  const check = eventCheck(type);
  if (check === undefined) return "type: not an event type of the journal";
  if (check(event)) return null;
  const error = check.errors?.[0];
  if (error === undefined) return "not an event of its type";
  // The generated checks carry no message text: the keyword that failed and its parameters say it.
  return `${error.instancePath.slice(1).replaceAll("/", ".") || "(event)"}: ${error.keyword} ${JSON.stringify(error.params)}`;
}
