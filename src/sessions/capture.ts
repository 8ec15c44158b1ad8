// Keeps the head and tail of a stream within a byte budget, counting what was dropped in between.

export const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024;

export class BoundedCapture {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private droppedBytes = 0;

  constructor(limitBytes: number = DEFAULT_OUTPUT_LIMIT_BYTES) {
    this.headLimit = Math.ceil(limitBytes / 2);
    this.tailLimit = Math.floor(limitBytes / 2);
  }

  push(chunk: Buffer): void {
    const headRoom = this.headLimit - this.headBytes;
    if (headRoom > 0) {
      const forHead = chunk.subarray(0, headRoom);
      this.head.push(forHead);
      this.headBytes += forHead.length;
      chunk = chunk.subarray(forHead.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    this.trimTail();
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
