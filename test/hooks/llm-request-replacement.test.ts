import { describe, expect, it } from "vitest";
import { validateLlmRequestReplacement } from "../../src/hooks/llm-request-replacement.js";

describe("validateLlmRequestReplacement", () => {
  it("accepts a well-formed request body and returns it typed", () => {
    const body = {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", name: "ls", arguments: "{}" }] },
        { role: "tool", content: "a.txt", tool_call_id: "c1" },
      ],
      tools: [{ type: "function", function: { name: "ls", description: "list", parameters: { type: "object" } } }],
      params: { temperature: 0 },
    };
    expect(validateLlmRequestReplacement(body)).toEqual(body);
  });

  it("accepts a body with messages only, leaving the other fields absent", () => {
    expect(validateLlmRequestReplacement({ messages: [{ role: "user", content: "x" }] })).toEqual({ messages: [{ role: "user", content: "x" }] });
  });

  it("rejects a malformed body with a message naming the bad fields and the fix", () => {
    const error = validateLlmRequestReplacement({ messages: [{ role: "user", content: "ok" }, { role: "tool", content: "x" }], temperature: 1 });
    expect(typeof error).toBe("string");
    expect(error).toContain("payload.messages[1]");
    expect(error).toContain("temperature");
    expect(error).toContain("Fix:");
  });

  it("rejects a body that is not an object or has no messages", () => {
    expect(validateLlmRequestReplacement("text")).toMatch(/^payload: /);
    expect(validateLlmRequestReplacement({ messages: [] })).toContain("payload.messages");
  });
});
