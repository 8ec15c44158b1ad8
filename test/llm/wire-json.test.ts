// A request body serialized piece by piece: the same bytes as JSON.stringify, each array element serialized once per object.
import fc from "fast-check";
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

describe("wireJson across requests", () => {
  it("gives JSON.stringify's bytes for arrays that grow, lose their start, change an element, shrink or come back, request after request", () => {
    const pool = Array.from({ length: 12 }, (_, index) => ({ role: index % 2 === 0 ? "user" : "tool", content: `message ${index} \u00e9` }));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 11 }), fc.integer({ min: 0, max: 12 }), fc.boolean()), { minLength: 1, maxLength: 25 }), (steps) => {
        for (const [start, length, withTools] of steps) {
          const messages = pool.slice(start, start + length);
          const body = { model: "m", ...(withTools ? { tools: pool.slice(0, 2) } : {}), messages, n: [1, "two", null] };
          expect(text(body)).toBe(JSON.stringify(body));
        }
      }),
    );
  });

  it("adds a growing conversation's new messages to the bytes of the last request's", () => {
    const messages: object[] = [];
    for (let turn = 0; turn < 50; turn += 1) {
      messages.push({ role: "user", content: `turn ${turn}` });
      const pieces = wireJson({ model: "m", messages: [...messages] });
      expect(Buffer.concat(pieces).toString()).toBe(JSON.stringify({ model: "m", messages }));
      // The array is one piece and its closing bracket, however long the conversation.
      expect(pieces.length).toBe(7);
    }
  });
});
