// A request body serialized piece by piece: the same bytes as JSON.stringify, each array element serialized once per object.
import { describe, expect, it } from "vitest";
import { wireJson } from "../../src/llm/wire-json.js";

const text = (body: unknown): string => Buffer.concat(wireJson(body)).toString("utf8");

describe("wireJson", () => {
  it("gives JSON.stringify's bytes for bodies with arrays, nested objects, unicode, undefined fields and holes", () => {
    const bodies: unknown[] = [
      { model: "m", stream: false, tools: [{ type: "function", function: { name: "read", parameters: { type: "object" } } }], messages: [{ role: "user", content: "héllo \u2028 \"quoted\" \n" }, { role: "assistant", content: null, tool_calls: [{ id: "c1" }] }] },
      { model: "m", skipped: undefined, fn: () => 1, empty: [], nested: { a: [1, 2, { b: undefined }] }, items: [1, "two", null, undefined, { c: 3 }] },
      { "1": "integer keys first", z: 1, a: 2 },
      { when: new Date(0) },
      "a plain string",
      [1, 2, 3],
      null,
    ];
    for (const body of bodies) expect(text(body)).toBe(JSON.stringify(body));
  });

  it("serializes an element object once: later bodies reuse its bytes, so a message changed in place is not seen", () => {
    const message = { role: "user", content: "first" };
    expect(text({ messages: [message] })).toBe('{"messages":[{"role":"user","content":"first"}]}');
    // Messages are never changed in place (journal-messages.ts renders each event once); a new object is serialized anew.
    message.content = "changed";
    expect(text({ messages: [message] })).toBe('{"messages":[{"role":"user","content":"first"}]}');
    expect(text({ messages: [{ ...message }] })).toBe('{"messages":[{"role":"user","content":"changed"}]}');
  });
});
