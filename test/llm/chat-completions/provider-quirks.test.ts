// The provider's answers to what real servers do: extras sent back or withheld, error shapes, overflow, streams that think aloud or stall, one connection.
import { afterEach, describe, expect, it } from "vitest";
import type { ChatMessage, LlmRequest } from "../../../src/conversation.js";
import { ContextOverflowError, LlmError } from "../../../src/errors.js";
import { createOpenAiProvider, type OpenAiProviderConfig } from "../../../src/llm/chat-completions/provider.js";
import { fault, messagesOf, reply, startMockLlm, type MockLlm, type Script } from "../../support/mock-llm.js";

const withReasoning: ChatMessage = {
  role: "assistant",
  content: "checking",
  tool_calls: [{ id: "call_1", name: "ls", arguments: "{}" }],
  reasoning: "I should list it.",
  provider_data: { protocol: "chat-completions", reasoning_field: "reasoning_content", message: { extra_content: { google: { thought_signature: "sig==" } } }, tool_calls: [{ extra_content: { google: { thought_signature: "call-sig" } } }] },
};

const request: LlmRequest = {
  model: "m",
  messages: [{ role: "user", content: "list" }, withReasoning, { role: "tool", tool_call_id: "call_1", content: "a b" }],
  tools: [],
  params: {},
};

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(script: Script, config: Partial<OpenAiProviderConfig> = {}) {
  server = await startMockLlm(script);
  return createOpenAiProvider({ apiKey: "sk-quirks-0123456789", baseUrl: server.baseUrl, retryBaseMs: 1, ...config }, {});
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof Error)) throw new Error("expected the call to fail");
  return err;
}

const sentAssistant = (index: number) => messagesOf(server!.requests[index]!)[1] as unknown as Record<string, unknown>;

describe("extras an earlier reply carried", () => {
  it("go back exactly where the server put them: the reasoning field, message fields, per-call fields", async () => {
    const provider = await setUp([reply.text("ok")]);
    await provider.complete(request);
    expect(sentAssistant(0)).toEqual({
      role: "assistant",
      content: "checking",
      reasoning_content: "I should list it.",
      extra_content: { google: { thought_signature: "sig==" } },
      tool_calls: [{ extra_content: { google: { thought_signature: "call-sig" } }, id: "call_1", type: "function", function: { name: "ls", arguments: "{}" } }],
    });
  });

  it("are read from each tool call too, as Gemini 3 puts its signature (mock-built: only Gemini 2.5's message-level form is recorded)", async () => {
    const signed = { id: "function-call-1", type: "function", function: { name: "ls", arguments: "{}" }, extra_content: { google: { thought_signature: "Cv4BAb==" } } };
    const provider = await setUp([reply.raw(200, { model: "gemini-3-pro", choices: [{ message: { role: "assistant", content: null, tool_calls: [signed] }, finish_reason: "tool_calls" }] })]);
    expect((await provider.complete(request)).provider_data).toEqual({ protocol: "chat-completions", tool_calls: [{ extra_content: { google: { thought_signature: "Cv4BAb==" } } }] });
  });

  it("another protocol's provider_data, or none, adds nothing", async () => {
    const provider = await setUp([reply.text("ok")]);
    const foreign = { ...withReasoning, provider_data: { protocol: "anthropic", content: [{ type: "thinking", signature: "x" }] } };
    await provider.complete({ ...request, messages: [request.messages[0]!, foreign, request.messages[2]!] });
    expect(sentAssistant(0)).toEqual({ role: "assistant", content: "checking", tool_calls: [{ id: "call_1", type: "function", function: { name: "ls", arguments: "{}" } }] });
  });

  it("are withheld, at once and for later calls, when the server refuses a field it named (Groq: property 'reasoning_content' is unsupported)", async () => {
    const retries: string[] = [];
    const refusal = { error: { message: "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property 'reasoning_content' is unsupported)]", type: "invalid_request_error" } };
    const provider = await setUp([reply.raw(400, refusal), reply.text("ok"), reply.text("again")]);
    expect((await provider.complete(request, { onFailedAttempt: (info) => retries.push(info.reason) })).content).toBe("ok");
    await provider.complete(request);
    expect(sentAssistant(0)).toHaveProperty("reasoning_content");
    expect(sentAssistant(1)).not.toHaveProperty("reasoning_content");
    expect(sentAssistant(1)).not.toHaveProperty("extra_content");
    expect(sentAssistant(2)).not.toHaveProperty("reasoning_content");
    expect(retries).toEqual([expect.stringMatching(/property 'reasoning_content' is unsupported.*; sending again without the reasoning fields of earlier replies/)]);
  });

  it("are not withheld when the server says one is missing: that refusal is final", async () => {
    const provider = await setUp([reply.raw(400, { error: { message: "Missing `reasoning_content` field in the assistant message at message index 1" } }), reply.text("never")]);
    const err = await failureOf(provider.complete(request));
    expect(server!.requests).toHaveLength(1);
    expect(err.message).toMatch(/refused the request \(HTTP 400: "Missing `reasoning_content` field/);
  });
});

describe("error bodies of shapes no recording holds (mock-built)", () => {
  const shapes: [string, number, string | object, RegExp][] = [
    ["vLLM's {object: error}", 400, { object: "error", message: "max_tokens must be at least 1, got 0.", type: "BadRequestError", param: null, code: 400 }, /HTTP 400: "max_tokens must be at least 1, got 0\."/],
    ["Gemini's JSON array", 400, [{ error: { code: 400, message: "Invalid value at 'tools[0]'", status: "INVALID_ARGUMENT" } }], /HTTP 400: "Invalid value at 'tools\[0\]'" \[INVALID_ARGUMENT\]/],
    ["{error: text}", 404, { error: "model 'llama9' not found" }, /HTTP 404: "model 'llama9' not found"/],
    ["plain text", 403, "Forbidden by policy", /HTTP 403: "Forbidden by policy"/],
  ];
  for (const [shape, status, body, words] of shapes) {
    it(`quotes the words of ${shape}`, async () => {
      const provider = await setUp([reply.raw(status, body, typeof body === "string" ? { "content-type": "text/plain" } : {})]);
      expect((await failureOf(provider.complete(request))).message).toMatch(words);
    });
  }

  it("an HTTP 200 whose body is an error is quoted, retried once (not 'no choices'), and a retryable code inside it is retried as that status", async () => {
    const provider = await setUp([reply.raw(200, { error: { message: "upstream hiccup" } }), reply.raw(200, { error: { message: "upstream hiccup" } })]);
    const err = await failureOf(provider.complete(request));
    expect(server!.requests).toHaveLength(2);
    expect(err.message).toMatch(/failed after 2 attempts: an error in place of a reply: "upstream hiccup"/);
    await server!.close();
    const again = await setUp([reply.raw(200, { error: { code: 502, message: "Provider returned error" } }), reply.text("fine")]);
    expect((await again.complete(request)).content).toBe("fine");
  });

  it("a context-length refusal is a ContextOverflowError (CONTEXT_OVERFLOW) naming the sizes, not retried", async () => {
    const provider = await setUp([reply.raw(400, { object: "error", message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4500 in the messages, 500 in the completion).", type: "BadRequestError", code: 400 }), reply.text("never")]);
    const err = await failureOf(provider.complete(request));
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect(err).toMatchObject({ type: "CONTEXT_OVERFLOW", sizes: { limitTokens: 4096, requestedTokens: 5000 } });
    expect(err.message).toMatch(/longer than the model's context window \(5000 tokens asked of a 4096-token window\).*maximum context length is 4096/);
    expect(server!.requests).toHaveLength(1);
  });

  it("a content_filter finish with no content is a reply, not an unusable one", async () => {
    const provider = await setUp([reply.raw(200, { model: "m", choices: [{ message: { role: "assistant", content: null }, finish_reason: "content_filter" }] })]);
    expect(await provider.complete(request)).toMatchObject({ content: null, finish_reason: "content_filter" });
  });
});

describe("streaming", () => {
  const sse = { "content-type": "text/event-stream" };
  const chunk = (delta: object, extra: object = {}) => `data: ${JSON.stringify({ model: "m", choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

  it("asks for a stream with usage, and, timeout_ms unset, is not cut off while bytes keep coming", async () => {
    const pieces = ["Thinking", " slowly", " but", " surely"].map((text) => ({ afterMs: 80, data: chunk({ reasoning_content: text }) }));
    const end = { afterMs: 80, data: `${chunk({ content: "done" })}data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 9 } })}\n\ndata: [DONE]\n\n` };
    const provider = await setUp([reply.chunks(200, sse, [...pieces, end])], { stream: true, idleTimeoutMs: 300 });
    expect(await provider.complete(request)).toMatchObject({ content: "done", reasoning: "Thinking slowly but surely", finish_reason: "stop", usage: { input_tokens: 3, output_tokens: 9 } });
    expect(server!.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("gives up on a stream that sends nothing for idle_timeout_ms, and says so", async () => {
    const provider = await setUp([reply.chunks(200, sse, [{ afterMs: 0, data: chunk({ content: "he" }) }, { afterMs: 5000, data: chunk({ content: "llo" }) }])], { stream: true, idleTimeoutMs: 200, maxRetries: 0 });
    const err = await failureOf(provider.complete(request));
    expect(err).toBeInstanceOf(LlmError);
    expect(err.message).toMatch(/no bytes for 200 ms \(llm\.idle_timeout_ms\)/);
  });
});

describe("connections", () => {
  it("keeps one connection alive across calls", async () => {
    const provider = await setUp([reply.text("1"), reply.text("2"), reply.text("3")]);
    for (let call = 0; call < 3; call += 1) await provider.complete(request);
    expect(server!.connections()).toBe(1);
  });

  it("sends a query the base URL carries (Azure's api-version) after the path", async () => {
    server = await startMockLlm([reply.text("ok")]);
    const provider = createOpenAiProvider({ apiKey: "sk-quirks-0123456789", baseUrl: `${server.baseUrl}?api-version=2024-10-21` }, {});
    await provider.complete(request);
    expect(server.requests[0]!.url).toBe("/v1/chat/completions?api-version=2024-10-21");
  });

  it("retries a 500 as before, and a reset as a connection failure", async () => {
    const provider = await setUp([fault.status(500), fault.reset(), reply.text("ok")]);
    expect((await provider.complete(request)).content).toBe("ok");
  });
});
