// Keeps the last bytes a stream wrote, for a message that quotes how a server's stderr ended.

export class TailBuffer {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private dropped = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.limit && this.chunks.length > 0) {
      const oldest = this.chunks[0]!;
      const excess = this.bytes - this.limit;
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

  /** The kept text, trimmed; "…" first when older output was dropped. A cut never splits a UTF-8 character. */
  text(): string {
    let tail = Buffer.concat(this.chunks);
    let start = 0;
    while (start < tail.length && (tail[start]! & 0xc0) === 0x80) start += 1;
    tail = tail.subarray(start);
    const text = tail.toString("utf8").trim();
    return this.dropped && text !== "" ? `…${text}` : text;
  }
}
