// Captures keep a stream's head (stopping past a limit) or its head and tail with a marker.
import { describe, expect, it } from "vitest";
import { HeadAndTailCapture, HeadCapture, TailCapture, keepHeadAndTail } from "../../src/process/capture.js";

const WIDE = { "2-byte": "é", "3-byte": "€", "4-byte": "😀" };

/** `text` pushed in chunks of `size` bytes. */
function pushed<T extends { push(chunk: Buffer): unknown }>(capture: T, text: string, size: number): T {
  const bytes = Buffer.from(text, "utf8");
  for (let at = 0; at < bytes.length; at += size) capture.push(bytes.subarray(at, at + size));
  return capture;
}

describe("keepHeadAndTail (a tool's observation bound)", () => {
  it("cuts a whole text as a capture cuts a stream: the same head, tail and count, its own word in the marker", () => {
    for (const [width, char] of Object.entries(WIDE)) {
      const text = `a${char.repeat(40)}z`;
      for (let limit = 4; limit <= 21; limit += 1) {
        const captured = pushed(new HeadAndTailCapture(limit), text, 3).text();
        expect(keepHeadAndTail(text, limit, "truncated"), `${width} at ${limit}`).toBe(captured);
        expect(keepHeadAndTail(text, limit, "omitted")).toBe(captured.replace("truncated", "omitted"));
      }
    }
  });

  it("returns a text that fits unchanged", () => {
    expect(keepHeadAndTail("héllo", 6, "omitted")).toBe("héllo");
  });
});

describe("HeadAndTailCapture", () => {
  it("returns output under the limit unchanged, even a multi-byte character split across chunks", () => {
    const capture = new HeadAndTailCapture(16);
    const bytes = Buffer.from("héllo wörld", "utf8");
    for (const byte of bytes) capture.push(Buffer.from([byte]));
    expect(capture.text()).toBe("héllo wörld");
  });

  it("keeps the first and last halves of the budget and counts the bytes dropped between them", () => {
    const capture = new HeadAndTailCapture(8);
    capture.push(Buffer.from("0123456789"));
    capture.push(Buffer.from("abcdefghij"));
    expect(capture.text()).toBe("0123\n[... 12 bytes truncated ...]\nghij");
  });

  it("never cuts a character: the bytes of a character cut at either end count as truncated", () => {
    expect(pushed(new HeadAndTailCapture(7), "é".repeat(10), 20).text()).toBe("éé\n[... 14 bytes truncated ...]\né");
    expect(pushed(new HeadAndTailCapture(6), "é".repeat(10), 20).text()).toBe("é\n[... 16 bytes truncated ...]\né");
  });

  for (const [width, char] of Object.entries(WIDE)) {
    it(`keeps whole ${width} characters at odd and even limits, however the stream is chunked`, () => {
      const text = `a${char.repeat(40)}z`;
      const total = Buffer.byteLength(text);
      for (let limit = 4; limit <= 21; limit += 1) {
        for (const size of [1, 2, 3, 5, total]) {
          const kept = pushed(new HeadAndTailCapture(limit), text, size).text();
          const [head, marker, tail] = kept.split("\n");
          expect(kept, `limit ${limit}, chunks of ${size}`).not.toContain("\ufffd");
          expect(text.startsWith(head!) && text.endsWith(tail!)).toBe(true);
          expect(Buffer.byteLength(head!) + Number(/\d+/.exec(marker!)![0]) + Buffer.byteLength(tail!)).toBe(total);
        }
      }
    });
  }
});

describe("TailCapture", () => {
  it("keeps the last bytes, trimmed, marked when older output went, never starting mid-character", () => {
    expect(pushed(new TailCapture(64), "  short  ", 3).text()).toBe("short");
    for (const char of Object.values(WIDE)) {
      for (let limit = 3; limit <= 9; limit += 1) {
        const kept = pushed(new TailCapture(limit), `${char.repeat(10)}!`, 1).text();
        expect(kept).not.toContain("\ufffd");
        expect(kept.startsWith("…")).toBe(true);
        expect(`${char.repeat(10)}!`.endsWith(kept.slice(1))).toBe(true);
      }
    }
  });
});

describe("HeadCapture", () => {
  it("keeps a multi-byte character split across chunks whole", () => {
    const capture = new HeadCapture(100);
    for (const byte of Buffer.from("héllo", "utf8")) expect(capture.push(Buffer.from([byte]))).toBe(false);
    expect(capture.text()).toBe("héllo");
  });

  it("counts characters, says once that a chunk went over the limit and keeps only the head", () => {
    const capture = new HeadCapture(5);
    expect(capture.push(Buffer.from("ééé"))).toBe(false);
    expect(capture.push(Buffer.from("abcd"))).toBe(true);
    expect(capture.push(Buffer.from("more"))).toBe(false);
    expect(capture.text()).toBe("éééab");
  });

  it("cuts before a character outside the BMP rather than between its two UTF-16 units", () => {
    const capture = new HeadCapture(5);
    expect(capture.push(Buffer.from("ab😀😀"))).toBe(true);
    expect(capture.text()).toBe("ab😀");
  });

  it("ends a stream cut off mid-character with a replacement character", () => {
    const capture = new HeadCapture(10);
    capture.push(Buffer.from([0x61, 0xc3]));
    expect(capture.text()).toBe("a\ufffd");
    expect(capture.text()).toBe("a\ufffd");
  });
});
