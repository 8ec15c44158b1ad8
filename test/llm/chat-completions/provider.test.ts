// The OpenAI-compatible provider against the scripted mock server: mapping, retries, timeouts and secrecy.
import { afterEach, describe, expect, it } from "vitest";
import { LlmError } from "../../../src/errors.js";
import { createOpenAiProvider, type OpenAiProviderConfig } from "../../../src/llm/chat-completions/provider.js";
import type { LlmRequest } from "../../../src/conversation.js";
import { fault, reply, startMockLlm, type MockLlm, type Script } from "../../support/mock-llm.js";

const API_KEY = "sk-test-0123456789abcdef";

const request: LlmRequest = {
  model: "test-model",
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "list /tmp" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_a", name: "ls", arguments: '{"dir":"/"}' }] },
    { role: "tool", content: "bin etc", tool_call_id: "call_a" },
  ],
  tools: [{ type: "function", function: { name: "ls", description: "list a directory", parameters: { type: "object", properties: { dir: { type: "string" } } } } }],
  params: { temperature: 0.2, max_tokens: 100 },
};

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(script: Script, config: Partial<OpenAiProviderConfig> = {}) {
  server = await startMockLlm(script);
  const provider = createOpenAiProvider({ apiKey: API_KEY, baseUrl: server.baseUrl, retryBaseMs: 5, ...config }, {});
  return { server, provider };
}

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof LlmError)) throw new Error(`expected an LlmError, got ${String(err)}`);
  return err;
}

describe("createOpenAiProvider", () => {
  it("sends the request in Chat Completions shape with the key as a bearer token", async () => {
    const { server, provider } = await setUp([reply.text("ok")]);
    await provider.complete(request);
    const sent = server.requests[0];
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent?.body).toMatchObject({
      model: "test-model",
      temperature: 0.2,
      max_tokens: 100,
      tools: request.tools,
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "list /tmp" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "ls", arguments: '{"dir":"/"}' } }] },
        { role: "tool", content: "bin etc", tool_call_id: "call_a" },
      ],
    });
  });

  it("omits tools when none are offered and never asks for a stream", async () => {
    const { server, provider } = await setUp([reply.text("ok")]);
    await provider.complete({ ...request, tools: [], params: { stream: true } });
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body).not.toHaveProperty("tools");
    expect(body.stream).toBe(false);
  });

  it("maps a tool-call reply, its raw arguments and its usage", async () => {
    const { provider } = await setUp([
      reply.toolCalls([{ name: "ls", arguments: '{"dir": "/tmp"}', id: "call_1" }], "checking", { usage: { prompt_tokens: 12, completion_tokens: 5 }, model: "served-model" }),
    ]);
    expect(await provider.complete(request)).toEqual({
      content: "checking",
      tool_calls: [{ id: "call_1", name: "ls", arguments: '{"dir": "/tmp"}' }],
      usage: { input_tokens: 12, output_tokens: 5 },
      model: "served-model",
      finish_reason: "tool_calls",
    });
  });

  it("gives a usage of null when the server sends none, and fills a missing tool call id", async () => {
    const { provider } = await setUp([
      reply.raw(200, { model: "m", choices: [{ message: { content: null, tool_calls: [{ type: "function", function: { name: "ls", arguments: "{}" } }] }, finish_reason: "tool_calls" }] }),
    ]);
    const result = await provider.complete(request);
    expect(result.usage).toBeNull();
    expect(result.tool_calls[0]?.id).toMatch(/^call_\w+/);
  });

  it("waits for Retry-After on 429 and then succeeds", async () => {
    const retries: { attempt: number; retryInMs: number | null; reason: string }[] = [];
    const { server, provider } = await setUp([fault.status(429, { retryAfter: "1", message: "rate limited" }), reply.text("after the wait")]);
    const started = Date.now();
    const result = await provider.complete(request, { onFailedAttempt: ({ attempt, retryInMs, reason }) => retries.push({ attempt, retryInMs, reason }) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(result.content).toBe("after the wait");
    expect(server.requests).toHaveLength(2);
    expect(retries).toEqual([{ attempt: 1, retryInMs: 1000, reason: 'HTTP 429: "rate limited"' }]);
  });

  it("honours retry-after-ms over the computed backoff", async () => {
    const retries: number[] = [];
    const { provider } = await setUp([fault.status(503, { retryAfterMs: 120 }), reply.text("ok")], { retryBaseMs: 1 });
    await provider.complete(request, { onFailedAttempt: (info) => retries.push(info.retryInMs!) });
    expect(retries).toEqual([120]);
  });

  it("retries a 500 and returns the next good reply", async () => {
    const { server, provider } = await setUp([fault.status(500), fault.status(502), reply.text("recovered")]);
    expect((await provider.complete(request)).content).toBe("recovered");
    expect(server.requests).toHaveLength(3);
  });

  it("retries a connection reset in the middle of the body", async () => {
    const reasons: string[] = [];
    const { server, provider } = await setUp([fault.reset(), reply.text("whole")]);
    expect((await provider.complete(request, { onFailedAttempt: (info) => reasons.push(info.reason) })).content).toBe("whole");
    expect(server.requests).toHaveLength(2);
    expect(reasons[0]).toMatch(/connection (reset|closed)/);
  });

  it("fails a hung attempt after timeoutMs, retries, and gives up (the server never answers)", async () => {
    const { server, provider } = await setUp([fault.hang(), fault.hang()], { timeoutMs: 150, maxRetries: 1 });
    const started = Date.now();
    const err = await failure(provider.complete(request));
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(err.message).toMatch(/failed after 2 attempts: no answer within 150 ms/);
  });

  it("recovers when only the first attempt hangs", async () => {
    const { provider } = await setUp([fault.hang(), reply.text("fast now")], { timeoutMs: 150 });
    expect((await provider.complete(request)).content).toBe("fast now");
  });

  it("reports invalid JSON after using its retries", async () => {
    const { server, provider } = await setUp([fault.invalidJson(), fault.invalidJson()], { maxRetries: 1 });
    const err = await failure(provider.complete(request));
    expect(server.requests).toHaveLength(2);
    expect(err.message).toMatch(/not valid JSON/);
  });

  it("turns a reply without choices into an LlmError naming the problem", async () => {
    const { provider } = await setUp([fault.noChoices()], { maxRetries: 0 });
    const err = await failure(provider.complete(request));
    expect(err.message).toContain("failed after 1 attempt: the reply has no choices");
  });

  it("rejects a finished message with neither content nor tool calls, but returns one a token limit cut off", async () => {
    const { provider } = await setUp([reply.raw(200, { choices: [{ message: { content: null }, finish_reason: "stop" }] }), reply.raw(200, { choices: [{ message: { content: null }, finish_reason: "length" }] })], { maxRetries: 0 });
    expect((await failure(provider.complete(request))).message).toMatch(/neither content nor tool calls \(finish_reason: stop\)/);
    expect(await provider.complete(request)).toMatchObject({ content: null, tool_calls: [], finish_reason: "length" });
  });

  it("does not retry a 401 and says which endpoint refused it and why", async () => {
    const { server, provider } = await setUp([fault.status(401, { message: "invalid key" }), reply.text("never")]);
    const err = await failure(provider.complete(request));
    expect(server.requests).toHaveLength(1);
    expect(err.message).toBe(`The model endpoint ${server.baseUrl} refused the request (HTTP 401: "invalid key"); not retried. Check DELTA_API_KEY.`);
  });

  it("names the endpoint, status, attempts and server message once retries run out", async () => {
    const { server, provider } = await setUp([fault.status(500, { message: "upstream broke" }), fault.status(502, { message: "bad gateway" }), fault.status(500, { message: "upstream broke" })], { maxRetries: 2 });
    const err = await failure(provider.complete(request));
    expect(err.message).toBe(`The model endpoint ${server.baseUrl} failed after 3 attempts: HTTP 500: "upstream broke".`);
  });

  it("reports a refused connection with the endpoint and no credentials from the URL", async () => {
    const provider = createOpenAiProvider({ apiKey: API_KEY, baseUrl: "http://user:pw@127.0.0.1:9/v1?api-key=q", maxRetries: 0 }, {});
    const err = await failure(provider.complete(request));
    expect(err.message).toMatch(/^The model endpoint http:\/\/127\.0\.0\.1:9\/v1 failed after 1 attempt: connection failed \(.*ECONNREFUSED/);
  });

  it("passes the server's words on as they came: removing secrets is each output's job (secrets.ts)", async () => {
    const echo = `bad key ${API_KEY}`;
    const { provider } = await setUp([fault.status(403, { message: echo })]);
    const err = await failure(provider.complete(request));
    expect(err.message).toContain(echo);
  });

  it("stops at once when the signal aborts during a retry wait", async () => {
    const { provider } = await setUp([fault.status(429, { retryAfter: "30" }), reply.text("never")]);
    const controller = new AbortController();
    // The server asks for a 30 s wait, longer than the test may take: only the abort ends it.
    const pending = provider.complete(request, { signal: controller.signal, onFailedAttempt: () => setTimeout(() => controller.abort(), 20) });
    expect((await failure(pending)).message).toMatch(/aborted/);
  });

  it("stops at once when the signal aborts a request in flight", async () => {
    const { provider } = await setUp([fault.hang()]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    expect((await failure(provider.complete(request, { signal: controller.signal }))).message).toMatch(/aborted/);
  });

  it("refuses a base URL that is not http(s) and a bad DELTA_RETRY_BASE_MS", () => {
    expect(() => createOpenAiProvider({ apiKey: API_KEY, baseUrl: "localhost:8080" }, {})).toThrow(/base URL "localhost:8080" \(DELTA_BASE_URL or llm.base_url\) is not an http:\/\/ or https:\/\/ URL; add the scheme: http:\/\/localhost:8080/);
    expect(() => createOpenAiProvider({ apiKey: API_KEY }, { DELTA_RETRY_BASE_MS: "soon" })).toThrow(/DELTA_RETRY_BASE_MS must be a number/);
  });

  it("takes the backoff base from DELTA_RETRY_BASE_MS", async () => {
    server = await startMockLlm([fault.status(500), reply.text("ok")]);
    const delays: number[] = [];
    const provider = createOpenAiProvider({ apiKey: API_KEY, baseUrl: server.baseUrl }, { DELTA_RETRY_BASE_MS: "10" });
    await provider.complete(request, { onFailedAttempt: (info) => delays.push(info.retryInMs!) });
    expect(delays[0]).toBeGreaterThanOrEqual(8);
    expect(delays[0]).toBeLessThanOrEqual(12);
  });
});
