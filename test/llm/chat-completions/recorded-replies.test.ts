// The Chat Completions provider against real recorded replies of real servers, replayed byte for byte (test/fixtures/recorded).
import { afterEach, describe, expect, it } from "vitest";
import type { LlmRequest } from "../../../src/conversation.js";
import { ContextOverflowError, DeferredError, LlmError, ModelRefusedError } from "../../../src/errors.js";
import { createOpenAiProvider, type OpenAiProviderConfig } from "../../../src/llm/chat-completions/provider.js";
import { serverWords } from "../../../src/llm/server-words.js";
import { startMockLlm, type MockLlm, type Step } from "../../support/mock-llm.js";
import { recordedEntries, recordedJson, recordedStep } from "../../support/recorded.js";

const request: LlmRequest = { model: "m", messages: [{ role: "user", content: "go" }], tools: [], params: {} };

/** The families that speak Chat Completions (anthropic, openai-responses and gemini's native API do not). */
const CHAT_FAMILIES = new Set(["openai-chat", "azure", "deepseek", "kimi", "gemini-openai", "groq", "mistral", "openrouter", "together", "ollama", "llama-cpp", "xai", "zai", "cerebras", "huggingface", "tgi", "vllm"]);

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function replay(steps: Step[], config: Partial<OpenAiProviderConfig> = {}) {
  server = await startMockLlm(steps);
  return createOpenAiProvider({ apiKey: "sk-recorded-0123456789", baseUrl: server.baseUrl, retryBaseMs: 1, ...config }, {});
}

async function replyTo(name: string, config: Partial<OpenAiProviderConfig> = {}) {
  return (await replay([recordedStep(name)], config)).complete(request);
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof Error)) throw new Error("expected the call to fail");
  return err;
}

describe("recorded Chat Completions replies", () => {
  it("DeepSeek: reasoning_content beside a tool call is the reasoning, and goes back under that name; usage keeps cache hits and reasoning tokens", async () => {
    const reply = await replyTo("deepseek/reasoner-tool-call");
    expect(reply).toMatchObject({
      content: "Let me load the dice rolling capability!",
      tool_calls: [{ id: "call_00_sXqYgMESDht75NCLLZtt9804", name: "load_capability", arguments: '{"id": "DICE_ROLL"}' }],
      finish_reason: "tool_calls",
      usage: { input_tokens: 563, output_tokens: 116, cached_input_tokens: 512, reasoning_tokens: 60 },
      provider_data: { protocol: "chat-completions", reasoning_field: "reasoning_content" },
    });
    expect(reply.reasoning).toMatch(/^The user wants to play a dice game\./);
  });

  it("Gemini: the thought signature is kept to go back, an empty call id gets one, thinking counted only in total_tokens is output", async () => {
    const reply = await replyTo("gemini-openai/tool-call-thought-signature");
    const message = (recordedJson("gemini-openai/tool-call-thought-signature") as { choices: { message: Record<string, unknown> }[] }).choices[0]!.message;
    expect(reply.tool_calls).toEqual([{ id: expect.stringMatching(/^call_\w+/), name: "get_current_time", arguments: "{}" }]);
    expect(reply.provider_data).toEqual({ protocol: "chat-completions", message: { extra_content: message.extra_content, thought_signature: message.thought_signature } });
    expect(reply.usage).toEqual({ input_tokens: 35, output_tokens: 12 + 62, reasoning_tokens: 62 });
  });

  it("Mistral Magistral: content as thinking and text parts gives the text as content and the thinking as reasoning, the parts kept to go back", async () => {
    const reply = await replyTo("mistral/magistral-thinking-content-parts");
    const parts = (recordedJson("mistral/magistral-thinking-content-parts") as { choices: { message: { content: { type: string; text?: string }[] } }[] }).choices[0]!.message.content;
    expect(reply.content).toBe(parts.filter((part) => part.type === "text").map((part) => part.text).join(""));
    expect(reply.reasoning).toMatch(/^\*\*Analogizing crossing a river\*\*/);
    expect(reply.provider_data).toEqual({ protocol: "chat-completions", content: parts });
  });

  it("TGI 2.0: an integer tool call id and object arguments", async () => {
    const reply = await replyTo("tgi/v2.0.1-tool-call-integer-id");
    expect(reply.tool_calls).toEqual([{ id: "0", name: "get_current_weather", arguments: '{"format":"celsius","location":"Brooklyn"}' }]);
    expect(reply).toMatchObject({ finish_reason: "eos_token", usage: { input_tokens: 524, output_tokens: 37 } });
  });

  it("keeps cached prompt tokens in each server's form and the provider's own cost", async () => {
    expect((await replyTo("mistral/tool-call-num-cached-tokens")).usage).toEqual({ input_tokens: 77, output_tokens: 12, cached_input_tokens: 76 });
    await server?.close();
    expect((await replyTo("openai-chat/usage-cached-tokens")).usage).toEqual({ input_tokens: 4020, output_tokens: 4, cached_input_tokens: 4012, reasoning_tokens: 0 });
    await server?.close();
    expect((await replyTo("openrouter/usage-cost")).usage).toEqual({ input_tokens: 14, output_tokens: 4, cached_input_tokens: 0, reasoning_tokens: 0, cost_usd: 0.000102 });
    await server?.close();
    // xAI leaves reasoning out of completion_tokens and counts it in total_tokens.
    expect((await replyTo("xai/grok-3-mini-thinking-tool-call")).usage).toEqual({ input_tokens: 288, output_tokens: 27 + 350, cached_input_tokens: 7, reasoning_tokens: 350 });
  });

  it("OpenRouter: reasoning text, and reasoning_details with their signatures kept to go back", async () => {
    const reply = await replyTo("openrouter/grok-reasoning-parallel-tool-calls");
    const message = (recordedJson("openrouter/grok-reasoning-parallel-tool-calls") as { choices: { message: Record<string, unknown> }[] }).choices[0]!.message;
    expect(reply.tool_calls.map((call) => call.name)).toEqual(["add", "multiply"]);
    expect(reply.reasoning).toBe(message.reasoning);
    expect(reply.provider_data).toEqual({ protocol: "chat-completions", reasoning_field: "reasoning", message: { reasoning_details: message.reasoning_details } });
  });

  it("an OpenAI refusal in message.refusal is a refused reply quoting it; a length finish is a truncated one", async () => {
    expect(await replyTo("openai-chat/refusal-field")).toMatchObject({ content: "I'm very sorry, but I can't assist with that request.", finish_reason: "refusal", tool_calls: [] });
    await server?.close();
    expect(await replyTo("openai-chat/finish-length")).toMatchObject({ finish_reason: "length", content: expect.stringMatching(/^Certainly! Here is a list/) });
  });

  it("assembles streamed tool-call deltas and takes usage from the final chunk", async () => {
    const reply = await replyTo("openai-chat/parallel-tool-calls-stream-include-usage", { stream: true });
    expect(reply.tool_calls.map((call) => [call.name, JSON.parse(call.arguments) as unknown])).toEqual([["add", { a: 2, b: 3 }], ["multiply", { a: 2, b: 3 }]]);
    expect(reply.tool_calls.every((call) => call.id.startsWith("call_"))).toBe(true);
    const chunks = recordedJson("openai-chat/parallel-tool-calls-stream-include-usage") as { usage: { prompt_tokens: number; completion_tokens: number } | null }[];
    const usage = chunks.at(-1)!.usage!;
    expect(reply.usage).toMatchObject({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens });
  });

  it("Groq: assembles a Kimi K2 stream's parallel calls with their usage", async () => {
    const reply = await replyTo("groq/kimi-k2-parallel-tool-stream", { stream: true });
    expect(reply.tool_calls.map((call) => call.name)).toEqual(["add", "multiply"]);
    expect(reply.usage).toEqual({ input_tokens: 201, output_tokens: 58 });
  });

  it("assembles a streamed Magistral reply's thinking parts and text as the whole reply has them", async () => {
    const reply = await replyTo("mistral/magistral-thinking-content-parts-stream", { stream: true });
    expect(reply.content).toMatch(/ safe crossing\.$/);
    expect(reply.reasoning?.startsWith("Okay, the user")).toBe(true);
    expect(reply.provider_data?.content).toEqual([{ type: "thinking", thinking: [{ type: "text", text: reply.reasoning }] }, { type: "text", text: reply.content }]);
    expect(reply.usage).toEqual({ input_tokens: 10, output_tokens: 232 });
  });

  it("reads an event stream sent to a request that did not ask for one, and a JSON body sent to one that did", async () => {
    const streamed = await replyTo("deepseek/reasoner-stream", { stream: false });
    expect(streamed.content).not.toBe("");
    expect(streamed.reasoning).not.toBe("");
    expect(streamed.usage?.cached_input_tokens).toBeTypeOf("number");
    await server?.close();
    expect((await replyTo("deepseek/reasoner-tool-call", { stream: true })).tool_calls[0]?.name).toBe("load_capability");
  });

  it("decodes a recorded body sent gzip-, deflate- (zlib or raw) and br-compressed to exactly the same reply", async () => {
    const plain = await replyTo("deepseek/reasoner-tool-call");
    for (const compress of ["gzip", "deflate", "deflate-raw", "br"] as const) {
      await server?.close();
      expect(await (await replay([recordedStep("deepseek/reasoner-tool-call", { compress })])).complete(request)).toEqual(plain);
    }
  });

  it("a stream whose reply finished before an error chunk is the reply (OpenRouter); one that errs before finishing is retried once, then quoted (Groq tool_use_failed)", async () => {
    expect(await replyTo("openrouter/stream-error-chunk-http-200", { stream: true })).toMatchObject({ finish_reason: "length", usage: { input_tokens: 43, output_tokens: 10, cost_usd: 0 } });
    await server?.close();
    const provider = await replay([recordedStep("groq/error-tool-use-failed-stream"), recordedStep("groq/error-tool-use-failed-stream")], { stream: true });
    const err = await failureOf(provider.complete(request));
    expect(server!.requests).toHaveLength(2);
    expect(err.message).toMatch(/failed after 2 attempts: .*Tool call validation failed.*\[tool_use_failed\]/);
    expect(err.message).toMatch(/The model wrote a tool call the server could not accept/);
  });

  it("understands every recorded Chat Completions reply with status 200, whole or streamed", async () => {
    const entries = recordedEntries().filter((entry) => CHAT_FAMILIES.has(entry.family) && entry.status === 200);
    expect(entries.length).toBeGreaterThan(50);
    for (const entry of entries) {
      await server?.close();
      const provider = await replay([recordedStep(entry.file), recordedStep(entry.file)], { stream: entry.file.endsWith(".sse") });
      if (entry.shows.includes("error-in-stream") && !entry.shows.includes("finish_reason=length")) {
        expect((await failureOf(provider.complete(request))).message, entry.file).toMatch(/Tool call validation failed/);
        continue;
      }
      const reply = await provider.complete(request);
      expect(reply.content !== null || reply.tool_calls.length > 0 || reply.finish_reason === "length", entry.file).toBe(true);
      expect(reply.usage === null || reply.usage.input_tokens > 0, entry.file).toBe(true);
    }
  });

  it("quotes the server's own words from every recorded error body, whatever its shape", async () => {
    const entries = recordedEntries().filter((entry) => entry.status >= 400);
    expect(entries.length).toBeGreaterThan(10);
    for (const entry of entries) {
      await server?.close();
      const provider = await replay([recordedStep(entry.file), recordedStep(entry.file)], { maxRetries: 0 });
      const err = await failureOf(provider.complete(request));
      expect([LlmError, ContextOverflowError, ModelRefusedError, DeferredError].some((type) => err instanceof type), entry.file).toBe(true);
      const words = serverWords(recordedJson(entry.file));
      expect(words, entry.file).toBeDefined();
      expect(err.message, entry.file).toContain(JSON.stringify(words!.message).slice(1, 60));
      expect(err.message, entry.file).toContain(`HTTP ${entry.status}`);
    }
  });

  it("OpenRouter's error.metadata.raw: the upstream provider's words are in the message", async () => {
    const err = await failureOf((await replay([recordedStep("openrouter/error-429-metadata-raw")], { maxRetries: 0 })).complete(request));
    expect(err.message).toMatch(/Provider returned error \(Google: google\/gemini-2\.0-flash-exp:free is temporarily rate-limited upstream/);
  });

  const overflows: [string, { limitTokens?: number; requestedTokens?: number }][] = [
    ["anthropic/error-prompt-too-long-400", { limitTokens: 200000, requestedTokens: 3333404 }],
    ["openai-responses/error-context-length-exceeded-400", {}],
    ["deepseek/error-context-length-400", { limitTokens: 1048565, requestedTokens: 1250025 }],
    ["openrouter/error-context-length-400", { limitTokens: 200000, requestedTokens: 2500021 }],
    ["ollama/cloud-error-prompt-too-long-400", {}],
    ["ollama/native-error-input-exceeds-context-400", {}],
    ["gemini/error-input-token-count-400", { limitTokens: 1048576 }],
    ["xai/error-context-length-string-error-400", { limitTokens: 131072, requestedTokens: 625077 }],
  ];
  for (const [name, sizes] of overflows) {
    it(`recognises ${name} as a context overflow, with the sizes it names, not retried`, async () => {
      const err = await failureOf((await replay([recordedStep(name), recordedStep(name)])).complete(request));
      expect(err).toBeInstanceOf(ContextOverflowError);
      expect((err as ContextOverflowError).sizes).toEqual(sizes);
      expect(server!.requests).toHaveLength(1);
    });
  }

  it("a request larger than the tokens-per-minute limit (OpenAI 429) is refused at once: not an overflow, not a limit to wait for", async () => {
    const err = await failureOf((await replay([recordedStep("openai-chat/error-request-too-large-tpm-429"), recordedStep("openai-chat/error-request-too-large-tpm-429")], { maxRetries: 1 })).complete(request));
    expect(err).toBeInstanceOf(LlmError);
    expect(err.message).toMatch(/refused the request \(HTTP 429: "Request too large for gpt-5-nano.*; not retried\. The request alone is larger than the rate limit allows per minute, so waiting cannot help/);
    expect(server!.requests).toHaveLength(1);
  });

  it("Azure's prompt filter is MODEL_REFUSED, quoting it, whether or not a stream was asked for", async () => {
    for (const [name, stream] of [["azure/error-content-filter-400", false], ["azure/error-content-filter-400-stream-request", true]] as const) {
      await server?.close();
      const err = await failureOf((await replay([recordedStep(name)], { stream })).complete(request));
      expect(err).toBeInstanceOf(ModelRefusedError);
      expect(err.message).toMatch(/content filter refused the request .*triggering Azure OpenAI's content management policy/);
    }
  });

  it("waits as long as Azure's recorded Retry-After asks", async () => {
    const controller = new AbortController();
    const delays: number[] = [];
    const provider = await replay([recordedStep("azure/error-rate-limit-429-retry-after"), recordedStep("azure/error-rate-limit-429-retry-after")]);
    await failureOf(provider.complete(request, { signal: controller.signal, onFailedAttempt: (info) => (delays.push(info.retryInMs!), controller.abort()) }));
    expect(delays).toEqual([60_000]);
  });

  it("a refusal about a parameter is not taken for a context overflow, and gets the settings hint", async () => {
    const err = await failureOf((await replay([recordedStep("openai-chat/error-unsupported-value-400")], { maxRetries: 0 })).complete(request));
    expect(err).not.toBeInstanceOf(ContextOverflowError);
    expect(err.message).toMatch(/check the llm settings in agent\.yaml/);
  });
});
