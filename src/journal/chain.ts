// The journal's hash chain: each line the engine writes ends with `"hash":"sha256:<hex>"`, the SHA-256 of the hash before it, a newline, and the line without its hash.
import { createHash } from "node:crypto";
import { JournalError } from "../errors.js";
import { MAX_LINE_BYTES, readRange, scanLines } from "./line-scanner.js";

/**
 * How a hashed line ends: its last member is `"hash"`, written by the engine after every other field. `body` is the
 * line with that member removed — exactly the JSON the engine serialized before hashing it.
 */
const HASHED_ENDING = /^,"hash":"(sha256:[0-9a-f]{64})"\}$/;
const ENDING_BYTES = ',"hash":"sha256:'.length + 64 + '"}'.length;
const NEWLINE = Buffer.from("\n");
/** How far back the last line is looked for at a time. */
const TAIL_STEP_BYTES = 64 * 1024;

/** `sha256:<hex>` of `bytes`. */
function digestOf(...parts: Buffer[]): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return `sha256:${hash.digest("hex")}`;
}

/**
 * The hash a line chains from when the line before it carries none: the SHA-256 of every byte of the journal before
 * it (for a new run, of nothing). So a chain that starts after lines an older engine wrote also holds those lines.
 */
export function anchorHash(bytesBefore: Buffer | ReturnType<typeof createHash>): string {
  if (Buffer.isBuffer(bytesBefore)) return digestOf(bytesBefore);
  return `sha256:${bytesBefore.copy().digest("hex")}`;
}

/** The anchor of a journal's first line: the SHA-256 of no bytes. */
export const EMPTY_ANCHOR = anchorHash(Buffer.alloc(0));

/** The hash of a line whose body is `body`, chained to `previous` (the hash of the line before, or an anchor). */
export function chainHash(previous: string, body: Buffer): string {
  return digestOf(Buffer.from(previous), NEWLINE, body);
}

/** The line the engine writes for `body` (one JSON object, serialized): the body with its hash as its last member. */
export function hashedLine(body: string, previous: string): { line: string; hash: string } {
  const hash = chainHash(previous, Buffer.from(body));
  return { line: `${body.slice(0, -1)},"hash":"${hash}"}`, hash };
}

/** A line's body and the hash it carries, or null when it carries none (an older engine wrote it, or it was changed). */
export function splitHashedLine(line: Buffer): { body: Buffer; hash: string } | null {
  if (line.length < ENDING_BYTES + 2) return null;
  const ending = line.subarray(line.length - ENDING_BYTES).toString("latin1");
  const match = HASHED_ENDING.exec(ending);
  if (match === null) return null;
  return { body: Buffer.concat([line.subarray(0, line.length - ENDING_BYTES), Buffer.from("}")]), hash: match[1]! };
}

/**
 * The hash the next line of an open journal chains from, `end` being where its complete lines end: the last line's
 * hash, or, when that line carries none (an older engine wrote the journal) or there is none, the anchor of every byte
 * before `end`.
 */
export function chainTip(fd: number, end: number): string {
  const last = lastLineBefore(fd, end);
  const hashed = last === null ? null : splitHashedLine(last);
  if (hashed !== null) return hashed.hash;
  const digest = createHash("sha256");
  scanLines(fd, 0, end, (line) => {
    if (line === null) throw new JournalError("a line of the journal is longer than a line may be; it cannot be chained to");
    digest.update(line);
    digest.update(NEWLINE);
  });
  return anchorHash(digest);
}

/** The newline-terminated line that ends at `end` (without its newline), read backwards in bounded steps; null when `end` is 0. */
function lastLineBefore(fd: number, end: number): Buffer | null {
  if (end === 0) return null;
  const parts: Buffer[] = [];
  let bytes = 0;
  for (let stop = end - 1; stop > 0; ) {
    const start = Math.max(0, stop - TAIL_STEP_BYTES);
    const chunk = readRange(fd, start, stop);
    const newline = chunk.lastIndexOf(0x0a);
    parts.unshift(newline === -1 ? chunk : chunk.subarray(newline + 1));
    bytes += parts[0]!.length;
    if (newline !== -1 || start === 0) break;
    if (bytes > MAX_LINE_BYTES) return null;
    stop = start;
  }
  return Buffer.concat(parts);
}
