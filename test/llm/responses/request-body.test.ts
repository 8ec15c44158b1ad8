// The Responses body's input items kept from one request to the next: an earlier turn's items are the same objects, and every body's bytes are a fresh build's.
import { describe, expect, it } from "vitest";
import type { ChatMessage, LlmRequest } from "../../../src/conversation.js";
import { toResponsesBody } from "../../../src/llm/responses/request-body.js";
import { wireJson } from "../../../src/llm/wire-json.js";

const tool = { type: "function" as const, function: { name: "echo", description: "say it", parameters: { type: "object" } } };
const request = (messages: ChatMessage[]): LlmRequest => ({ model: "gpt-test", messages, tools: [tool], params: {} });
const input = (body: Record<string, unknown>): unknown[] => body.input as unknown[];

/** One turn: the model's reasoning item and call, and the tool's result. */
const turn = (n: number): ChatMessage[] => [
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: `call_${n}`, name: "echo", arguments: `{"n":${n}}` }],
    provider_data: { protocol: "openai-responses", output: [{ type: "reasoning", id: `rs_${n}`, encrypted_content: `enc${n}`, summary: [] }, { type: "function_call", call_id: `call_${n}` }] },
  },
  { role: "tool", tool_call_id: `call_${n}`, content: `result ${n}` },
];

describe("toResponsesBody", () => {
  it("sends an earlier turn's items as the same objects, with and without reasoning each kept apart", () => {
    const conversation: ChatMessage[] = [{ role: "system", content: "p" }, { role: "user", content: "task" }, ...turn(1)];
    const first = toResponsesBody(request(conversation), { stream: true });
    const firstPlain = toResponsesBody(request(conversation), { stream: true, withoutReasoning: true });
    conversation.push(...turn(2));
    const second = toResponsesBody(request(conversation), { stream: true });
    input(first).forEach((item, index) => expect(input(second)[index]).toBe(item));
    expect(second.tools).toEqual(first.tools);
    expect((second.tools as unknown[])[0]).toBe((first.tools as unknown[])[0]);
    // Without reasoning the reasoning item is left out, and the kept items with it are not reused.
    expect(input(firstPlain).some((item) => (item as { type?: string }).type === "reasoning")).toBe(false);
    expect(input(toResponsesBody(request(conversation), { stream: true }))).toContainEqual({ type: "reasoning", id: "rs_2", encrypted_content: "enc2", summary: [] });
  });

  it("gives every request the bytes a body built from fresh messages has", () => {
    const conversation: ChatMessage[] = [{ role: "system", content: "p" }, { role: "user", content: "task" }];
    for (let n = 1; n <= 10; n += 1) {
      conversation.push(...turn(n));
      for (const withoutReasoning of [false, true]) {
        const sent = Buffer.concat(wireJson(toResponsesBody(request(conversation), { stream: true, withoutReasoning }))).toString("utf8");
        expect(sent).toBe(JSON.stringify(toResponsesBody(request(structuredClone(conversation)), { stream: true, withoutReasoning })));
      }
    }
  });
});
