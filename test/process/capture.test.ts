// Captures keep a stream's head (stopping past a limit) or its head and tail with a marker.
import { describe, expect, it } from "vitest";
import { HeadAndTailCapture, HeadCapture } from "../../src/process/capture.js";

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

  it("ends a stream cut off mid-character with a replacement character", () => {
    const capture = new HeadCapture(10);
    capture.push(Buffer.from([0x61, 0xc3]));
    expect(capture.text()).toBe("a\ufffd");
    expect(capture.text()).toBe("a\ufffd");
  });
});
