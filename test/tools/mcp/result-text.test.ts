// What the model sees of an MCP tool result: text joined, every other kind of content described.
import { describe, expect, it } from "vitest";
import { base64Bytes, resultText } from "../../../src/tools/mcp/result-text.js";

describe("resultText", () => {
  it("joins text content with newlines", () => {
    expect(resultText({ content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] })).toBe("one\ntwo");
  });

  it("describes an image and an audio clip by MIME type and decoded size, never their bytes", () => {
    const png = Buffer.alloc(3000, 7).toString("base64");
    const text = resultText({ content: [{ type: "image", data: png, mimeType: "image/png" }, { type: "audio", data: "AAAA", mimeType: "audio/wav" }] });
    expect(text).toBe("[image: image/png, 2.9 KiB]\n[audio: audio/wav, 3 B]");
  });

  it("gives an embedded resource's URI and its text, a binary one's size, and a link's URI and name", () => {
    const text = resultText({
      content: [
        { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "hello" } },
        { type: "resource", resource: { uri: "file:///a.bin", blob: Buffer.from("abcd").toString("base64") } },
        { type: "resource_link", uri: "file:///b.txt", name: "b.txt" },
      ],
    });
    expect(text).toBe("[resource: file:///notes.txt, text/plain]\nhello\n[resource: file:///a.bin, 4 B]\n[resource link: file:///b.txt (b.txt)]");
  });

  it("falls back to the structured content as JSON when there is no content, and to nothing when there is neither", () => {
    expect(resultText({ content: [], structuredContent: { sum: 3 } })).toBe('{"sum":3}');
    expect(resultText({ content: [] })).toBe("");
  });
});

describe("base64Bytes", () => {
  it("counts decoded bytes, padding and line breaks included", () => {
    for (const size of [0, 1, 2, 3, 4, 5, 100]) {
      const encoded = Buffer.alloc(size, 1).toString("base64");
      expect(base64Bytes(encoded)).toBe(size);
      expect(base64Bytes(encoded.replace(/(.{4})/g, "$1\n"))).toBe(size);
    }
  });
});
