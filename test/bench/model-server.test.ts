// The benchmark's model server: it finds each run's progress from the conversation, even when the journal is windowed.
import { describe, expect, it } from "vitest";
import { anthropicMessages, nextStep, responsesMessages } from "../../bench/lib/model-server.mjs";

const user = { role: "user", content: "turns=3 key=run-a" };

describe("bench model server", () => {
  it("starts a run at call 1 and finishes it at call N", () => {
    expect(nextStep([{ role: "system", content: "prompt" }, user])).toEqual({ key: "run-a", call: 1, turns: 3, final: false });
    expect(nextStep([{ role: "user", content: "turns=1 key=k" }])).toEqual({ key: "k", call: 1, turns: 1, final: true });
  });

  it("counts from the last tool message, so a window that dropped earlier iterations still ends on time", () => {
    const windowed = [user, { role: "assistant", content: null }, { role: "tool", content: "2/3\n" }];
    expect(nextStep(windowed)).toEqual({ key: "run-a", call: 3, turns: 3, final: true });
  });

  it("refuses a conversation without a `turns=N key=K` message", () => {
    expect(nextStep([{ role: "user", content: "hello" }])).toBeNull();
  });

  it("reads an Anthropic or a Responses request as the same conversation", () => {
    const anthropic = { messages: [{ role: "user", content: [{ type: "text", text: "turns=3 key=run-a" }] }, { role: "assistant", content: [{ type: "tool_use", id: "t" }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "2/3\n" }] }] };
    const responses = { input: [{ role: "system", content: "prompt" }, { role: "user", content: "turns=3 key=run-a" }, { type: "reasoning", encrypted_content: "x" }, { type: "function_call", call_id: "c" }, { type: "function_call_output", call_id: "c", output: "2/3\n" }] };
    expect(nextStep(anthropicMessages(anthropic))).toEqual({ key: "run-a", call: 3, turns: 3, final: true });
    expect(nextStep(responsesMessages(responses))).toEqual({ key: "run-a", call: 3, turns: 3, final: true });
  });
});
