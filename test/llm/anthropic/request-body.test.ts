// The Messages body built from our messages: system and context blocks in their places, settings in Anthropic's terms, cache breakpoints where a growing run reads its prompt back.
import { describe, expect, it } from "vitest";
import type { ChatMessage, LlmRequest } from "../../../src/conversation.js";
import { MAX_CACHE_BREAKPOINTS } from "../../../src/llm/anthropic/cache-breakpoints.js";
import { toMessagesBody } from "../../../src/llm/anthropic/request-body.js";
import { ANTHROPIC_DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS } from "../../../src/llm/reply-tokens.js";
import { wireJson } from "../../../src/llm/wire-json.js";

type Block = Record<string, unknown>;
type Body = ReturnType<typeof toMessagesBody>;

const tool = { type: "function" as const, function: { name: "echo", description: "say it", parameters: { type: "object", properties: { text: { type: "string" } } } } };
const request = (messages: ChatMessage[], params: Record<string, unknown> = {}): LlmRequest => ({ model: "claude-test", messages, tools: [tool], params });
const body = (messages: ChatMessage[], params: Record<string, unknown> = {}): Body => toMessagesBody(request(messages, params), { stream: false });
const marked = (b: Body): Block[] => [...(b.tools ?? []), ...(b.system ?? []), ...b.messages.flatMap((message) => message.content)].filter((block) => block.cache_control !== undefined);

/** One tool-calling turn of a run: the model's call and the tool's result. */
const turn = (n: number, calls = 1): ChatMessage[] => [
  { role: "assistant", content: null, tool_calls: Array.from({ length: calls }, (_, i) => ({ id: `toolu_${n}_${i}`, name: "echo", arguments: JSON.stringify({ text: `${n}.${i}` }) })) },
  ...Array.from({ length: calls }, (_, i): ChatMessage => ({ role: "tool", tool_call_id: `toolu_${n}_${i}`, content: `${n}.${i}\n` })),
];

describe("toMessagesBody", () => {
  it("opening system messages are the system blocks; a context block after the conversation stays in its place as user text", () => {
    const b = body([
      { role: "system", content: "You are careful." },
      { role: "system", content: "# Context Block: guide\n\nbe brief" },
      { role: "user", content: "task" },
      ...turn(1),
      { role: "system", content: "# Context Block: status\n\nchanges every iteration" },
    ]);
    expect(b.system).toEqual([{ type: "text", text: "You are careful." }, { type: "text", text: "# Context Block: guide\n\nbe brief", cache_control: { type: "ephemeral" } }]);
    expect(b.tools).toEqual([{ name: "echo", description: "say it", input_schema: tool.function.parameters }]);
    expect(b.messages.map((message) => [message.role, message.content.map((block) => block.type)])).toEqual([
      ["user", ["text"]],
      ["assistant", ["tool_use"]],
      ["user", ["tool_result", "text"]],
    ]);
  });

  it("max_tokens is always sent (8192 by default, plus the thinking budget), stop becomes stop_sequences, thinking is enabled with its budget", () => {
    expect(body([{ role: "user", content: "x" }])).toMatchObject({ model: "claude-test", max_tokens: DEFAULT_MAX_TOKENS });
    const b = body([{ role: "user", content: "x" }], { temperature: 1, stop: "END", thinking: { budget_tokens: 2048 } });
    expect(b).toMatchObject({ max_tokens: DEFAULT_MAX_TOKENS + 2048, temperature: 1, stop_sequences: ["END"], thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(b).not.toHaveProperty("stop");
    expect(body([{ role: "user", content: "x" }], { max_tokens: 100, stop: ["a", "b"] })).toMatchObject({ max_tokens: 100, stop_sequences: ["a", "b"] });
  });

  it("an empty tool result goes without content, and arguments that are not JSON go back as an empty input", () => {
    const b = body([
      { role: "user", content: "x" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", name: "echo", arguments: '{"text": "cut' }] },
      { role: "tool", tool_call_id: "t1", content: "" },
    ]);
    expect(b.messages[1]!.content).toEqual([{ type: "tool_use", id: "t1", name: "echo", input: {} }]);
    expect(b.messages[2]!.content).toEqual([{ type: "tool_result", tool_use_id: "t1", cache_control: { type: "ephemeral" } }]);
  });

  it("an assistant turn of another protocol (or with no places kept) sends its text before its calls", () => {
    const b = body([
      { role: "user", content: "x" },
      { role: "assistant", content: "calling", tool_calls: [{ id: "c1", name: "echo", arguments: "{}" }], reasoning: "hm", provider_data: { protocol: "chat-completions", reasoning_field: "reasoning" } },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ]);
    expect(b.messages[1]!.content).toEqual([{ type: "text", text: "calling" }, { type: "tool_use", id: "c1", name: "echo", input: {} }]);
  });
});

describe("cache breakpoints", () => {
  it("mark the tools+system prefix and the newest journal message, never a context block after it", () => {
    const b = body([{ role: "system", content: "prompt" }, { role: "user", content: "task" }, ...turn(1), { role: "system", content: "volatile" }]);
    expect(marked(b)).toEqual([
      { type: "text", text: "prompt", cache_control: { type: "ephemeral" } },
      { type: "tool_result", tool_use_id: "toolu_1_0", content: "1.0\n", cache_control: { type: "ephemeral" } },
    ]);
  });

  it("mark the last tool when there is no system prompt, and never a thinking block", () => {
    const thinking = { type: "thinking", thinking: "hm", signature: "sig" };
    const b = body([
      { role: "user", content: "task" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", name: "echo", arguments: "{}" }], provider_data: { protocol: "anthropic", content: [thinking, { type: "tool_use", id: "t1" }] } },
    ]);
    expect(b.tools![0]!.cache_control).toEqual({ type: "ephemeral" });
    expect(b.messages[1]!.content[0]).toEqual(thinking);
    expect(b.messages[1]!.content[1]!.cache_control).toEqual({ type: "ephemeral" });
  });

  it("mark a copy of a block sent back whole, never the journal's own (frozen, shared) provider data", () => {
    const kept = Object.freeze({ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: Object.freeze([]) });
    const providerData = Object.freeze({ protocol: "anthropic", content: Object.freeze([Object.freeze({ type: "text" }), kept]) });
    const b = body([{ role: "system", content: "p" }, { role: "user", content: "task" }, { role: "assistant", content: "found it", provider_data: providerData }]);
    const sent = b.messages[1]!.content.at(-1)!;
    expect(sent).toMatchObject({ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", cache_control: { type: "ephemeral" } });
    expect(kept).not.toHaveProperty("cache_control");
  });

  it("also mark the previous turn when more than 20 blocks came since (Anthropic looks back 20), and never more than 4", () => {
    const few = body([{ role: "system", content: "p" }, { role: "user", content: "task" }, ...turn(1), ...turn(2, 3)]);
    expect(marked(few)).toHaveLength(2);
    const many = body([{ role: "system", content: "p" }, { role: "user", content: "task" }, ...turn(1), ...turn(2, 12)]);
    expect(marked(many).map((block) => block.tool_use_id ?? block.text)).toEqual(["p", "toolu_1_0", "toolu_2_11"]);
    expect(marked(many).length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
  });

  it("keep each request a byte-identical prefix of the next up to where the previous one marked its newest message", () => {
    const conversation: ChatMessage[] = [{ role: "system", content: "You are a benchmark agent." }, { role: "user", content: "task" }];
    let previous = "";
    let share = 0;
    for (let n = 1; n <= 30; n += 1) {
      const text = JSON.stringify(body(conversation));
      if (previous !== "") {
        const moved = previous.lastIndexOf(',"cache_control"');
        expect(text.slice(0, moved)).toBe(previous.slice(0, moved));
        share = moved / text.length;
      }
      previous = text;
      conversation.push(...turn(n));
    }
    expect(share).toBeGreaterThan(0.95);
  });
});

describe("wire forms kept from one request to the next", () => {
  it("send an earlier turn's wire message as the same object, so its bytes are serialized once per run", () => {
    const conversation: ChatMessage[] = [{ role: "system", content: "p" }, { role: "user", content: "task" }, ...turn(1), ...turn(2)];
    const first = body(conversation);
    conversation.push(...turn(3));
    const second = body(conversation);
    // The first request's user task and first turn: unmarked then and now, so kept.
    for (const index of [0, 1, 3]) expect(second.messages[index]).toBe(first.messages[index]);
    // The first request's newest message was a marked copy; the next request sends it unmarked.
    expect(second.messages[4]).not.toBe(first.messages[4]);
    expect(second.messages[4]!.content.some((block) => block.cache_control !== undefined)).toBe(false);
  });

  it("give every request the bytes a body built from fresh messages has: no cache mark of an earlier request stays behind", () => {
    const conversation: ChatMessage[] = [{ role: "system", content: "p" }, { role: "user", content: "task" }];
    for (let n = 1; n <= 25; n += 1) {
      conversation.push(...turn(n, n % 7 === 0 ? 12 : 1));
      const sent = Buffer.concat(wireJson(body(conversation))).toString("utf8");
      expect(sent).toBe(JSON.stringify(body(structuredClone(conversation))));
    }
  });
});
