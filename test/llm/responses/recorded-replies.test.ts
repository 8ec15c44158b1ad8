// Real recorded OpenAI Responses traffic (test/fixtures/recorded/openai-responses; sources in its manifest) served byte for byte: replies, streams, errors, and the requests the server accepted.
import { afterEach, describe, expect, it } from "vitest";
import { replyEnding, type ChatMessage, type LlmReply, type LlmRequest } from "../../../src/conversation.js";
import { ContextOverflowError, LlmError } from "../../../src/errors.js";
import { createResponsesProvider } from "../../../src/llm/responses/provider.js";
import { reply, startMockLlm, type MockLlm, type Script } from "../../support/mock-llm.js";
import { recordedEntries, recordedJson, recordedRequest, recordedStep } from "../../support/recorded.js";

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Item = Record<string, unknown>;
const ask = (messages: ChatMessage[] = [{ role: "user", content: "go" }], tools: LlmRequest["tools"] = []): LlmRequest => ({ model: "gpt-test", messages, tools, params: {} });
const outputOf = (name: string) => (recordedJson(name) as { output: Item[] }).output;
const assistant = (reply: LlmReply): ChatMessage => ({
  role: "assistant",
  content: reply.content,
  ...(reply.tool_calls.length > 0 ? { tool_calls: reply.tool_calls } : {}),
  ...(reply.reasoning !== undefined ? { reasoning: reply.reasoning } : {}),
  ...(reply.provider_data ? { provider_data: reply.provider_data } : {}),
});

async function providerFor(script: Script, options: { stream?: boolean; maxRetries?: number } = {}) {
  server = await startMockLlm(script, { protocol: "openai-responses" });
  return createResponsesProvider({ apiKey: "sk-test-0123456789abcdef", baseUrl: server.baseUrl, retryBaseMs: 1, maxRetries: options.maxRetries ?? 2, stream: options.stream ?? false }, {});
}

async function replyTo(name: string, request: LlmRequest = ask()): Promise<LlmReply> {
  const result = await (await providerFor([recordedStep(name)], { stream: name.endsWith("-stream") })).complete(request);
  await server!.close();
  server = undefined;
  return result;
}

describe("recorded Responses replies", () => {
  it("an encrypted reasoning item is kept whole in its place before the function call; the call's id is its call_id; usage keeps reasoning and cached tokens", async () => {
    const result = await replyTo("openai-responses/encrypted-reasoning-function-calls");
    const [reasoning, call] = outputOf("openai-responses/encrypted-reasoning-function-calls");
    expect(result).toMatchObject({
      content: null,
      tool_calls: [{ id: "call_uy7tfNVokIN7NjFF6k7OtLyl", name: "lookup_population", arguments: '{"country":"Pundora"}' }],
      finish_reason: "completed",
      model: "gpt-5.5-2026-04-23",
      usage: { input_tokens: 94, cached_input_tokens: 0, output_tokens: 85, reasoning_tokens: 63 },
    });
    expect(result.provider_data).toEqual({ protocol: "openai-responses", output: [reasoning, { type: "function_call", call_id: call!.call_id }] });
    expect(JSON.stringify((result.provider_data!.output as Item[])[0])).toBe(JSON.stringify(reasoning));
    expect(result.reasoning).toBeUndefined();
  });

  it("a reasoning summary is the reasoning a person reads, whole and streamed", async () => {
    const whole = await replyTo("openai-responses/summary-reasoning-function-call");
    expect(whole.reasoning).toBe((outputOf("openai-responses/summary-reasoning-function-call")[0]!.summary as { text: string }[])[0]!.text);
    const streamed = await replyTo("openai-responses/summary-reasoning-function-call-stream");
    const deltas = (recordedJson("openai-responses/summary-reasoning-function-call-stream") as Item[]).filter((event) => event.type === "response.reasoning_summary_text.delta");
    expect(streamed.reasoning).toBe(deltas.map((event) => event.delta).join(""));
    for (const result of [whole, streamed]) {
      expect(result.reasoning).toMatch(/^\*\*/);
      expect(result.tool_calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([["weather", { location: "Florence, Italy" }]]);
      expect((result.provider_data!.output as Item[]).map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    }
  });

  it("a plain message is the content, and its phase is kept to go back", async () => {
    const result = await replyTo("openai-responses/plain-message");
    expect(result).toMatchObject({ content: "pong", tool_calls: [], finish_reason: "completed", usage: { input_tokens: 11, output_tokens: 5, reasoning_tokens: 0 } });
    expect(result.provider_data).toEqual({ protocol: "openai-responses", output: [{ type: "message", phase: "final_answer" }] });
  });

  it("a refusal part is a refused reply quoting it; status incomplete for max_output_tokens is a truncated one, whole or streamed", async () => {
    const refused = await replyTo("openai-responses/refusal-content");
    expect(refused).toMatchObject({ content: "I'm very sorry, but I can't assist with that.", finish_reason: "refusal" });
    expect(replyEnding(refused.finish_reason)).toBe("refused");
    for (const name of ["openai-responses/incomplete-max-output-tokens", "openai-responses/incomplete-max-output-tokens-stream"]) {
      const cut = await replyTo(name);
      expect(cut.finish_reason, name).toBe("max_output_tokens");
      expect(replyEnding(cut.finish_reason), name).toBe("truncated");
      expect(cut.content, name).toMatch(/^Sure! Here is a list of all 50 U\.S\. states/);
    }
  });

  it("cached input and input written to the cache are counted", async () => {
    expect((await replyTo("openai-responses/usage-cached-tokens")).usage).toEqual({ input_tokens: 4020, cached_input_tokens: 4012, cache_write_input_tokens: 0, output_tokens: 5, reasoning_tokens: 0 });
    expect((await replyTo("openai-responses/prompt-cache-key-read")).usage).toMatchObject({ input_tokens: 6165, cached_input_tokens: 6016 });
  });

  it("assembles a streamed function call from the stream's final response", async () => {
    const result = await replyTo("openai-responses/tool-use-stream");
    expect(result.tool_calls).toEqual([{ id: "call_sVidsfFJ6zlzRpelrPkTPlpd", name: "multiply", arguments: '{"a":1231,"b":2331}' }]);
    expect(result.usage).toMatchObject({ input_tokens: 58, output_tokens: 23 });
  });

  it("understands every recorded Responses reply with status 200, whole or streamed", async () => {
    const entries = recordedEntries().filter((entry) => entry.family === "openai-responses" && entry.status === 200);
    expect(entries.length).toBeGreaterThanOrEqual(17);
    for (const entry of entries) {
      const result = await replyTo(entry.file.replace(/\.response\.(json|sse)$/, ""));
      expect(result.content !== null || result.tool_calls.length > 0, entry.file).toBe(true);
      expect(result.usage?.input_tokens, entry.file).toBeGreaterThan(0);
    }
  });
});

describe("recorded Responses errors", () => {
  it("context_length_exceeded is CONTEXT_OVERFLOW, not retried", async () => {
    const provider = await providerFor([recordedStep("openai-responses/error-context-length-exceeded-400"), reply.text("never")]);
    const err = await provider.complete(ask()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect((err as Error).message).toContain("Your input exceeds the context window of this model.");
    expect(server!.requests).toHaveLength(1);
  });

  it("a bad model or setting is refused with the server's words and code, not retried", async () => {
    for (const [name, words] of [
      ["openai-responses/error-model-not-found-400", /HTTP 400: "The requested model 'this-model-does-not-exist-12345' does not exist\." \[model_not_found\]/],
      ["openai-responses/error-http-400", /HTTP 400: "Invalid 'temperature': decimal below minimum value\. Expected a value >= 0, but got -1 instead\." \[decimal_below_min_value\]/],
    ] as const) {
      const provider = await providerFor([recordedStep(name), reply.text("never")]);
      const err = await provider.complete(ask()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LlmError);
      expect((err as Error).message, name).toMatch(words);
      expect(server!.requests, name).toHaveLength(1);
      await server!.close();
      server = undefined;
    }
  });

  it("a model without reasoning refusing encrypted reasoning is asked again at once without it, and later calls leave it out (mock-built: no recording holds this refusal)", async () => {
    const refusal = { error: { message: "Encrypted content is not supported with this model.", type: "invalid_request_error", param: "include", code: null } };
    const provider = await providerFor([reply.raw(400, refusal), reply.text("first"), reply.text("second")]);
    expect((await provider.complete(ask())).content).toBe("first");
    expect((await provider.complete(ask())).content).toBe("second");
    const bodies = server!.requests.map((request) => request.body as Item);
    expect(bodies.map((body) => "include" in body)).toEqual([true, false, false]);
    expect(bodies.every((body) => body.store === false)).toBe(true);
  });
});

describe("the requests the recorded server accepted", () => {
  it("after encrypted reasoning and a function call: the reasoning item goes back byte for byte, then the call, then its output", async () => {
    const recorded = recordedRequest("openai-responses/encrypted-reasoning-function-calls-followup");
    const tools = (recorded.tools as Item[]).map((tool) => ({ type: "function" as const, function: { name: tool.name as string, description: tool.description as string, parameters: tool.parameters as Record<string, unknown> } }));
    const task: ChatMessage = { role: "user", content: "Pick a clever country name, look up its population, then check whether it can have dragons. Be brief." };
    const first = await replyTo("openai-responses/encrypted-reasoning-function-calls", ask([task], tools));
    const provider = await providerFor([recordedStep("openai-responses/encrypted-reasoning-function-calls-followup")]);
    const next = await provider.complete({ ...ask([task, assistant(first), { role: "tool", tool_call_id: first.tool_calls[0]!.id, content: "123124" }], tools), model: "gpt-5.5", params: { reasoning_effort: "high" } });
    expect(next.tool_calls[0]).toMatchObject({ name: "can_have_dragons", arguments: '{"population":123124}' });
    const sent = server!.requests[0]!.body as Item;
    expect(sent).toMatchObject({ model: "gpt-5.5", store: false, include: ["reasoning.encrypted_content"], reasoning: { effort: "high" } });
    // The same tools, said to be non-strict: without strict: false, Responses would make every optional parameter required.
    expect(sent.tools).toEqual((recorded.tools as Item[]).map((tool) => ({ ...tool, strict: false })));
    // The recorded client re-serialised the arguments ("{\"country\": \"Pundora\"}"); we send them as the model wrote them.
    const input = sent.input as Item[];
    expect(input.map((item) => ({ ...item, ...(item.type === "function_call" ? { arguments: JSON.parse(item.arguments as string) } : {}) }))).toEqual(
      (recorded.input as Item[]).map((item) => ({ ...item, ...(item.type === "function_call" ? { arguments: JSON.parse(item.arguments as string) } : {}) })),
    );
    expect(JSON.stringify(input[1])).toBe(JSON.stringify(outputOf("openai-responses/encrypted-reasoning-function-calls")[0]));
    expect(input[2]).toEqual({ type: "function_call", call_id: "call_uy7tfNVokIN7NjFF6k7OtLyl", name: "lookup_population", arguments: '{"country":"Pundora"}' });
  });

  it("a four-turn tool loop: each request carries every earlier reasoning item and call in order, as the recorded client's did, and reads more of its prompt from the cache", async () => {
    const recorded = [1, 2, 3, 4].map((turn) => recordedRequest(`openai-responses/tool-loop-turn-${turn}-cache`));
    const tools = (recorded[0]!.tools as Item[]).map((tool) => ({ type: "function" as const, function: { name: tool.name as string, description: tool.description as string, parameters: tool.parameters as Record<string, unknown> } }));
    const messages: ChatMessage[] = [{ role: "user", content: "Roll the dice 3 times" }];
    const cached: number[] = [];
    for (const turn of [1, 2, 3, 4]) {
      const provider = await providerFor([recordedStep(`openai-responses/tool-loop-turn-${turn}-cache`)]);
      const result = await provider.complete(ask(messages, tools));
      const input = (server!.requests[0]!.body as Item).input as Item[];
      // The recorded client left out each reasoning item's id and empty content; the items and their order are the same.
      const essentials = (items: Item[]) => items.map((item) => (item.type === "reasoning" ? { type: item.type, encrypted_content: item.encrypted_content, summary: item.summary } : item));
      expect(essentials(input), `turn ${turn}`).toEqual(essentials(recorded[turn - 1]!.input as Item[]));
      await server!.close();
      server = undefined;
      cached.push(result.usage!.cached_input_tokens!);
      messages.push(assistant(result));
      for (const [index, call] of result.tool_calls.entries()) messages.push({ role: "tool", tool_call_id: call.id, content: `{"roll":${turn + index}}` });
    }
    expect(cached).toEqual([0, 0, 1408, 1536]);
  });
});
