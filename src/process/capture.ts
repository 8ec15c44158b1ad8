// Keeps what one output stream of a process wrote, within a limit: its head only, or its head and tail.
import { StringDecoder } from "node:string_decoder";

/**
 * `head`: keep the first `maxChars` characters; more is over the limit, and the runner stops the
 * process. `head-and-tail`: keep the first and last halves of `maxBytes`, with a marker counting the
 * bytes dropped between them; the process runs on.
 */
export type CaptureLimit = { keep: "head"; maxChars: number } | { keep: "head-and-tail"; maxBytes: number };

export interface Capture {
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
    this.kept += text.slice(0, this.maxChars - this.kept.length);
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
    const head = Buffer.concat(this.head).toString("utf8");
    const tail = Buffer.concat(this.tail).toString("utf8");
    return `${head}\n[... ${this.droppedBytes} bytes truncated ...]\n${tail}`;
  }
}
