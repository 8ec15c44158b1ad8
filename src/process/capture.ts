// Keeps what one output stream of a process wrote, within a limit: its head, its tail, or its head and tail; no cut splits a UTF-8 character.
import { StringDecoder } from "node:string_decoder";

/**
 * `head`: keep the first `maxChars` characters; more is over the limit, and the runner stops the
 * process. `head-and-tail`: keep the first and last halves of `maxBytes`, with a marker counting the
 * bytes dropped between them; the process runs on. (`TailCapture` keeps only the last bytes.)
 */
export type CaptureLimit = { keep: "head"; maxChars: number } | { keep: "head-and-tail"; maxBytes: number };

interface Capture {
  /** Takes one chunk; true when this chunk went over a `head` limit. */
  push(chunk: Buffer): boolean;
  text(): string;
}

export function createCapture(limit: CaptureLimit): Capture {
  return limit.keep === "head" ? new HeadCapture(limit.maxChars) : new HeadAndTailCapture(limit.maxBytes);
}

/** Decodes as it goes, so a character split across chunks is kept whole. */
export class HeadCapture implements Capture {
  private readonly decoder = new StringDecoder("utf8");
  private kept = "";
  private full = false;
  private ended = false;

  constructor(private readonly maxChars: number) {}

  push(chunk: Buffer): boolean {
    if (this.full) return false;
    const text = this.decoder.write(chunk);
    if (this.kept.length + text.length <= this.maxChars) {
      this.kept += text;
      return false;
    }
    let room = this.maxChars - this.kept.length;
    // A character outside the BMP is two UTF-16 units: the cut goes before it, never between them.
    if (room > 0 && isHighSurrogate(text.charCodeAt(room - 1))) room -= 1;
    this.kept += text.slice(0, room);
    this.full = true;
    return true;
  }

  text(): string {
    if (!this.ended && !this.full) {
      // A stream cut off mid-character ends with U+FFFD, as a decoding stream would end it.
      this.kept += this.decoder.end();
    }
    this.ended = true;
    return this.kept;
  }
}

export class HeadAndTailCapture implements Capture {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private droppedBytes = 0;

  constructor(limitBytes: number) {
    this.headLimit = Math.ceil(limitBytes / 2);
    this.tailLimit = Math.floor(limitBytes / 2);
  }

  push(chunk: Buffer): boolean {
    const headRoom = this.headLimit - this.headBytes;
    if (headRoom > 0) {
      const forHead = chunk.subarray(0, headRoom);
      this.head.push(forHead);
      this.headBytes += forHead.length;
      chunk = chunk.subarray(forHead.length);
    }
    if (chunk.length === 0) return false;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    this.trimTail();
    return false;
  }

  /** Drops the oldest tail bytes until the tail fits its half of the budget. */
  private trimTail(): void {
    while (this.tailBytes > this.tailLimit) {
      const oldest = this.tail[0];
      if (oldest === undefined) return;
      const excess = this.tailBytes - this.tailLimit;
      if (oldest.length <= excess) {
        this.tail.shift();
        this.tailBytes -= oldest.length;
        this.droppedBytes += oldest.length;
      } else {
        this.tail[0] = oldest.subarray(excess);
        this.tailBytes -= excess;
        this.droppedBytes += excess;
      }
    }
  }

  text(): string {
    if (this.droppedBytes === 0) return Buffer.concat([...this.head, ...this.tail]).toString("utf8");
    return joinAroundCut(Buffer.concat(this.head), Buffer.concat(this.tail), this.droppedBytes, "truncated");
  }
}

/**
 * `text` whole when its UTF-8 fits in `maxBytes`; else its first and last halves of the budget, with a marker saying how
 * many bytes were `word` between them (the marker line is not counted), as a capture keeps a stream that was too long.
 */
export function keepHeadAndTail(text: string, maxBytes: number, word: string): string {
  // A UTF-8 string never has more bytes than 3 per UTF-16 unit, so short texts skip the encoding.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  const head = bytes.subarray(0, Math.ceil(maxBytes / 2));
  const tail = bytes.subarray(bytes.length - Math.floor(maxBytes / 2));
  return joinAroundCut(head, tail, bytes.length - head.length - tail.length, word);
}

/** Head and tail joined by the marker; a character either cut would split is left out of it and counted as dropped. */
function joinAroundCut(head: Buffer, tail: Buffer, dropped: number, word: string): string {
  const headEnd = wholeCharsEnd(head);
  const tailStart = charStartFrom(tail, 0);
  const total = dropped + (head.length - headEnd) + tailStart;
  return `${head.subarray(0, headEnd).toString("utf8")}\n[... ${total} bytes ${word} ...]\n${tail.subarray(tailStart).toString("utf8")}`;
}

/** Keeps the last `maxBytes` a stream wrote (a server's stderr, to quote how it ended). */
export class TailCapture {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private dropped = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.maxBytes && this.chunks.length > 0) {
      const oldest = this.chunks[0]!;
      const excess = this.bytes - this.maxBytes;
      this.dropped = true;
      if (oldest.length <= excess) {
        this.chunks.shift();
        this.bytes -= oldest.length;
      } else {
        this.chunks[0] = oldest.subarray(excess);
        this.bytes -= excess;
      }
    }
  }

  /** The kept text, trimmed; "…" first when older output was dropped. */
  text(): string {
    const tail = Buffer.concat(this.chunks);
    const text = tail.subarray(this.dropped ? charStartFrom(tail, 0) : 0).toString("utf8").trim();
    return this.dropped && text !== "" ? `…${text}` : text;
  }
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** The first index at or after `from` where a character starts. */
function charStartFrom(bytes: Buffer, from: number): number {
  let at = from;
  while (at < bytes.length && isContinuationByte(bytes[at])) at += 1;
  return at;
}

/** Where `bytes` ends once a last character it holds only part of is left out. */
function wholeCharsEnd(bytes: Buffer): number {
  let lead = bytes.length - 1;
  while (lead > 0 && bytes.length - lead < 4 && isContinuationByte(bytes[lead])) lead -= 1;
  const first = bytes[lead];
  if (first === undefined) return 0;
  const width = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return lead + width > bytes.length ? lead : bytes.length;
}
