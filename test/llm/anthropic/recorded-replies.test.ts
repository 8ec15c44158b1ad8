// Real recorded Anthropic Messages traffic (test/fixtures/recorded/anthropic; sources in its manifest) served byte for byte: replies, streams, errors, and the requests the server accepted.
import { afterEach, describe, expect, it } from "vitest";
import type { LlmReply, LlmRequest } from "../../../src/conversation.js";
import { ContextOverflowError, LlmError } from "../../../src/errors.js";
import { createAnthropicProvider } from "../../../src/llm/anthropic/provider.js";
import { replyEnding } from "../../../src/conversation.js";
import { reply, startMockLlm, type MockLlm, type Script } from "../../support/mock-llm.js";
import { recordedEntries, recordedJson, recordedRequest, recordedStep } from "../../support/recorded.js";

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ask = (model = "claude-test"): LlmRequest => ({ model, messages: [{ role: "user", content: "go" }], tools: [], params: {} });

async function providerFor(script: Script, options: { stream?: boolean; maxRetries?: number } = {}) {
  server = await startMockLlm(script, { protocol: "anthropic" });
  return createAnthropicProvider({ apiKey: "sk-ant-test-0123456789", baseUrl: server.baseUrl, retryBaseMs: 1, maxRetries: options.maxRetries ?? 2, stream: options.stream ?? false }, {});
}

async function replyTo(name: string, request: LlmRequest = ask()): Promise<LlmReply> {
  return (await providerFor([recordedStep(name)])).complete(request);
}

type Block = Record<string, unknown>;
const recordedContent = (name: string) => (recordedJson(name) as { content: Block[] }).content;

describe("recorded Anthropic replies", () => {
  it("several tool_use blocks in one turn are the reply's tool calls, in order, with their input as JSON text; text beside them is the content", async () => {
    const result = await replyTo("anthropic/parallel-tool-use");
    expect(result).toMatchObject({
      content: "I'll add and multiply the numbers 2 and 3 for you.",
      tool_calls: [
        { id: "toolu_01StBeRxDEwsqcc3arbDgpS9", name: "add", arguments: '{"a":2,"b":3}' },
        { id: "toolu_01AC6WQhj2iRkdYHgTAGMpVQ", name: "multiply", arguments: '{"a":2,"b":3}' },
      ],
      finish_reason: "tool_use",
      model: "claude-sonnet-4-20250514",
      usage: { input_tokens: 507, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 137 },
    });
    // Nothing beyond text and calls: the journal needs no provider_data to send this turn back.
    expect(result.provider_data).toBeUndefined();
  });

  it("a thinking block is the reasoning, and is kept whole, signature included, in its place before the tool call", async () => {
    const result = await replyTo("anthropic/thinking-signature-tool-use");
    const [thinking, toolUse] = recordedContent("anthropic/thinking-signature-tool-use");
    expect(result.reasoning).toBe(thinking!.thinking);
    expect(result.provider_data).toEqual({ protocol: "anthropic", content: [thinking, { type: "tool_use", id: toolUse!.id }] });
    expect(JSON.stringify((result.provider_data!.content as Block[])[0])).toBe(JSON.stringify(thinking));
  });

  it("redacted_thinking is kept whole in its place and is no reasoning a person can read", async () => {
    const result = await replyTo("anthropic/redacted-thinking");
    const [redacted] = recordedContent("anthropic/redacted-thinking");
    expect(result.reasoning).toBeUndefined();
    expect(result.provider_data).toEqual({ protocol: "anthropic", content: [redacted, { type: "text" }] });
    expect(result.content).toMatch(/^I notice that your message appears to contain a command/);
  });

  it("stop_reason max_tokens is a truncated reply, whole or streamed", async () => {
    const whole = await replyTo("anthropic/stop-reason-max-tokens");
    const streamed = await (await providerFor([recordedStep("anthropic/stop-reason-max-tokens-stream")], { stream: true })).complete(ask());
    for (const result of [whole, streamed]) {
      expect(result.finish_reason).toBe("max_tokens");
      expect(replyEnding(result.finish_reason)).toBe("truncated");
      expect(result.content).toMatch(/^Here are all 50 U\.S\. states in alphabetical order:\n\n1\. Alabama[\s\S]*8\. Delaware\n9$/);
      expect(result.usage).toMatchObject({ input_tokens: 15, output_tokens: 50 });
    }
  });

  it("cache reads and cache writes are both input, kept apart (prompt-cache-write, prompt-cache-read, and one reply with both)", async () => {
    expect((await replyTo("anthropic/prompt-cache-write")).usage).toEqual({ input_tokens: 10 + 7351, cached_input_tokens: 0, cache_write_input_tokens: 7351, output_tokens: 4 });
    expect((await replyTo("anthropic/prompt-cache-read")).usage).toEqual({ input_tokens: 10 + 7351, cached_input_tokens: 7351, cache_write_input_tokens: 0, output_tokens: 4 });
    expect((await replyTo("anthropic/cache-read-and-creation")).usage).toEqual({ input_tokens: 3 + 1111 + 418, cached_input_tokens: 1111, cache_write_input_tokens: 418, output_tokens: 33 });
  });

  it("assembles a streamed thinking block (its deltas and signature deltas) and a streamed tool call as a whole reply has them", async () => {
    const result = await (await providerFor([recordedStep("anthropic/thinking-signature-tool-use-stream")], { stream: true })).complete(ask());
    const events = recordedJson("anthropic/thinking-signature-tool-use-stream") as { type: string; delta?: { type: string; thinking?: string; signature?: string; partial_json?: string } }[];
    const deltas = (type: string, field: "thinking" | "signature" | "partial_json") => events.filter((event) => event.delta?.type === type).map((event) => event.delta![field]).join("");
    const [thinking, toolUse] = result.provider_data!.content as Block[];
    expect(thinking).toEqual({ type: "thinking", thinking: deltas("thinking_delta", "thinking"), signature: deltas("signature_delta", "signature") });
    expect((thinking!.signature as string).length).toBeGreaterThan(100);
    expect(result.reasoning).toBe(thinking!.thinking);
    expect(toolUse).toEqual({ type: "tool_use", id: result.tool_calls[0]!.id });
    expect(JSON.parse(result.tool_calls[0]!.arguments)).toEqual(JSON.parse(deltas("input_json_delta", "partial_json")));
    expect(result.finish_reason).toBe("tool_use");
  });

  it("assembles two streamed tool calls and redacted thinking in their streamed order", async () => {
    const parallel = await (await providerFor([recordedStep("anthropic/parallel-tool-use-stream")], { stream: true })).complete(ask());
    expect(parallel.tool_calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([["add", { a: 2, b: 3 }], ["multiply", { a: 2, b: 3 }]]);
    const redacted = await (await providerFor([recordedStep("anthropic/redacted-thinking-stream")], { stream: true })).complete(ask());
    const blocks = redacted.provider_data!.content as Block[];
    expect(blocks.map((block) => block.type)).toEqual(["redacted_thinking", "redacted_thinking", "text"]);
    expect((blocks[0]!.data as string).startsWith("EqkECkYIBxgCKkA8AZ4noDfV5VcOJe")).toBe(true);
  });

  it("understands every recorded Anthropic reply with status 200, whole or streamed", async () => {
    const entries = recordedEntries().filter((entry) => entry.family === "anthropic" && entry.status === 200 && !entry.shows.includes("error-in-stream"));
    expect(entries.length).toBeGreaterThanOrEqual(14);
    for (const entry of entries) {
      const result = await (await providerFor([recordedStep(entry.file)], { stream: entry.file.endsWith(".sse") })).complete(ask());
      expect(result.content !== null || result.tool_calls.length > 0, entry.file).toBe(true);
      expect(result.usage?.input_tokens, entry.file).toBeGreaterThan(0);
      await server!.close();
      server = undefined;
    }
  });
});

describe("recorded Anthropic errors", () => {
  it("529 overloaded_error is retried, and so is an overloaded_error inside a 200 stream", async () => {
    const provider = await providerFor([recordedStep("anthropic/error-overloaded-529"), recordedStep("anthropic/overloaded-error-in-stream"), reply.text("after two overloads")]);
    const retries: string[] = [];
    const result = await provider.complete(ask(), { onFailedAttempt: ({ reason }) => retries.push(reason) });
    expect(result.content).toBe("after two overloads");
    expect(retries).toEqual(['HTTP 529: "Overloaded" [overloaded_error]', 'an error (529) in place of a reply: "Overloaded" [overloaded_error]']);
  });

  it("a 429 with X-Should-Retry: true is retried; one with X-Should-Retry: false (a request over the per-minute limit) is not", async () => {
    const retried = await providerFor([recordedStep("anthropic/error-rate-limit-concurrent-429"), reply.text("ok")]);
    expect((await retried.complete(ask())).content).toBe("ok");
    await server!.close();
    const refused = await providerFor([recordedStep("anthropic/error-rate-limit-input-tokens-429"), reply.text("never")]);
    const err = await refused.complete(ask()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as Error).message).toMatch(/refused the request \(HTTP 429: "This request would exceed your organization's rate limit of 450,000 input tokens per minute/);
    expect((err as Error).message).toContain("X-Should-Retry: false");
    expect(server!.requests).toHaveLength(1);
  });

  it("prompt is too long is CONTEXT_OVERFLOW with both sizes, not retried", async () => {
    const provider = await providerFor([recordedStep("anthropic/error-prompt-too-long-400"), reply.text("never")]);
    const err = await provider.complete(ask()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect((err as ContextOverflowError).sizes).toEqual({ limitTokens: 200000, requestedTokens: 3333404 });
    expect(server!.requests).toHaveLength(1);
  });

  it("quotes the words and the error type of every recorded error, not retried when the status says so", async () => {
    const cases: [string, RegExp][] = [
      ["anthropic/error-authentication-401", /HTTP 401: "invalid x-api-key" \[authentication_error\].*Check DELTA_API_KEY/],
      ["anthropic/error-not-found-404", /HTTP 404: "model: this-model-does-not-exist-12345" \[not_found_error\]/],
      ["anthropic/error-invalid-request-400", /HTTP 400: "This model does not support effort level 'xhigh'\. Supported levels: high, low, max, medium\." \[invalid_request_error\]/],
    ];
    for (const [name, words] of cases) {
      const provider = await providerFor([recordedStep(name)], { maxRetries: 0 });
      const err = await provider.complete(ask()).catch((e: unknown) => e);
      expect((err as Error).message, name).toMatch(words);
      await server!.close();
      server = undefined;
    }
  });
});

describe("the requests the recorded server accepted", () => {
  // Our requests put text in blocks as {type, text} and a tool result as a string; the recorded
  // clients sent the same things as [{text, type}]: equal once both are read the API's way.
  const normalised = (messages: unknown): unknown =>
    JSON.parse(JSON.stringify(messages), (key, value: unknown) => {
      if (key === "cache_control") return undefined;
      if (key === "content" && typeof value === "string") return [{ type: "text", text: value }];
      return value;
    });

  it("after a thinking tool call: the thinking block goes back byte for byte before the tool_use, and the result answers it", async () => {
    const recorded = recordedRequest("anthropic/thinking-followup");
    const first = await replyTo("anthropic/thinking-signature-tool-use");
    await server!.close();
    const followup: LlmRequest = {
      model: "claude-sonnet-4-20250514",
      messages: [
        { role: "system", content: "You are a helpful assistant" },
        { role: "user", content: "What's the weather in Florence, Italy?" },
        { role: "assistant", content: first.content, tool_calls: first.tool_calls, ...(first.reasoning ? { reasoning: first.reasoning } : {}), ...(first.provider_data ? { provider_data: first.provider_data } : {}) },
        { role: "tool", tool_call_id: first.tool_calls[0]!.id, content: "40 C" },
      ],
      tools: [{ type: "function", function: { name: "weather", description: "Get weather information for a location", parameters: (recorded.tools as Block[])[0]!.input_schema as Record<string, unknown> } }],
      params: { max_tokens: 4096, thinking: { budget_tokens: 4000 } },
    };
    const provider = await providerFor([recordedStep("anthropic/thinking-followup")]);
    const final = await provider.complete(followup);
    expect(final.content).toMatch(/^The current temperature in Florence, Italy is 40°C/);
    const sent = server!.requests[0]!.body as Record<string, unknown>;
    expect(normalised(sent.messages)).toEqual(normalised(recorded.messages));
    expect(normalised(sent.system)).toEqual(normalised(recorded.system));
    expect(normalised(sent.tools)).toEqual(normalised(recorded.tools));
    expect(sent).toMatchObject({ model: recorded.model, max_tokens: recorded.max_tokens, thinking: recorded.thinking });
    const [thinking] = recordedContent("anthropic/thinking-signature-tool-use");
    expect(JSON.stringify(((sent.messages as { content: Block[] }[])[1]!.content)[0])).toBe(JSON.stringify(thinking));
  });

  it("after parallel tool calls: one tool_use per call and one tool_result per result, in order", async () => {
    const recorded = recordedRequest("anthropic/tool-result-followup");
    const first = await replyTo("anthropic/parallel-tool-use");
    await server!.close();
    const provider = await providerFor([recordedStep("anthropic/tool-result-followup")]);
    await provider.complete({
      model: "claude-sonnet-4-20250514",
      messages: [
        { role: "system", content: "You are a helpful assistant. CRITICAL: Always use both add and multiply at the same time ALWAYS." },
        { role: "user", content: "Add and multiply the number 2 and 3" },
        { role: "assistant", content: first.content, tool_calls: first.tool_calls },
        { role: "tool", tool_call_id: first.tool_calls[0]!.id, content: "5" },
        { role: "tool", tool_call_id: first.tool_calls[1]!.id, content: "6" },
      ],
      tools: (recorded.tools as Block[]).map((tool) => ({ type: "function", function: { name: tool.name as string, description: tool.description as string, parameters: tool.input_schema as Record<string, unknown> } })),
      params: { max_tokens: 4000 },
    });
    expect(normalised((server!.requests[0]!.body as Record<string, unknown>).messages)).toEqual(normalised(recorded.messages));
  });

  it("after redacted thinking and a new question: the redacted block goes back unchanged before the text", async () => {
    const recorded = recordedRequest("anthropic/redacted-thinking-followup");
    const first = await replyTo("anthropic/redacted-thinking");
    await server!.close();
    const provider = await providerFor([recordedStep("anthropic/redacted-thinking-followup")]);
    const next = await provider.complete({
      model: "claude-sonnet-4-5-20250929",
      messages: [
        { role: "user", content: (recorded.messages as { content: Block[] }[])[0]!.content[0]!.text as string },
        { role: "assistant", content: first.content, provider_data: first.provider_data! },
        { role: "user", content: "What was that?" },
      ],
      tools: [],
      params: { max_tokens: 4096, thinking: { budget_tokens: 1024 } },
    });
    expect(normalised((server!.requests[0]!.body as Record<string, unknown>).messages)).toEqual(normalised(recorded.messages));
    expect(next.provider_data?.content).toHaveLength(2);
  });
});
