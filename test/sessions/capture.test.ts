// BoundedCapture keeps whole output under the limit, and head + marker + tail above it.
import { describe, expect, it } from "vitest";
import { BoundedCapture } from "../../src/sessions/capture.js";

describe("BoundedCapture", () => {
  it("returns output under the limit unchanged, even a multi-byte character split across chunks", () => {
    const capture = new BoundedCapture(16);
    const bytes = Buffer.from("héllo wörld", "utf8");
    for (const byte of bytes) capture.push(Buffer.from([byte]));
    expect(capture.text()).toBe("héllo wörld");
  });

  it("keeps the first and last halves of the budget and counts the bytes dropped between them", () => {
    const capture = new BoundedCapture(8);
    capture.push(Buffer.from("0123456789"));
    capture.push(Buffer.from("abcdefghij"));
    expect(capture.text()).toBe("0123\n[... 12 bytes truncated ...]\nghij");
  });
});
