// The rules every mock model checks: a tool call id is unique within its turn only, as two servers (or two runs of one mock) may reuse one.
import { describe, expect, it } from "vitest";
import { requestViolations } from "./request-invariants.js";

const turn = (id: string): Record<string, unknown>[] => [
  { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "run", arguments: "{}" } }] },
  { role: "tool", tool_call_id: id, content: "ok" },
];
const responsesTurn = (id: string): Record<string, unknown>[] => [{ type: "function_call", call_id: id, name: "run", arguments: "{}" }, { type: "function_call_output", call_id: id, output: "ok" }];

describe("request invariants", () => {
  it("Chat Completions: an id reused by a later turn is valid; one answered twice within its turn is not", () => {
    expect(requestViolations("chat-completions", { messages: [{ role: "user", content: "go" }, ...turn("call_1"), { role: "user", content: "again" }, ...turn("call_1")] })).toEqual([]);
    const twice = { messages: [{ role: "user", content: "go" }, ...turn("call_1"), { role: "tool", tool_call_id: "call_1", content: "again" }] };
    expect(requestViolations("chat-completions", twice)).toEqual(["message 3 (tool) answers 'call_1' a second time"]);
  });

  it("Responses: an id reused by a later turn is valid; an output with no unanswered call, or a call with none, is not", () => {
    expect(requestViolations("openai-responses", { store: false, input: [...responsesTurn("c1"), ...responsesTurn("c1")] })).toEqual([]);
    expect(requestViolations("openai-responses", { store: false, input: [...responsesTurn("c1"), { type: "function_call_output", call_id: "c1", output: "x" }] })).toEqual(["function_call_output c1 answers no earlier function_call left unanswered"]);
    expect(requestViolations("openai-responses", { store: false, input: [{ type: "function_call", call_id: "c2", name: "run", arguments: "{}" }] })).toEqual(["function_call c2 has no output"]);
  });
});
