// Proves each scripted step of the mock model server over plain HTTP.
import { afterEach, describe, expect, it } from "vitest";
import { fault, reply, startMockLlm, type MockLlm } from "./mock-llm.js";
import { waitFor } from "../e2e/harness.js";

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function post(url: string, body: object, path = "/chat/completions"): Promise<Response> {
  return fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer k" }, body: JSON.stringify(body) });
}

const request = { model: "test-model", messages: [{ role: "user", content: "hello" }] };

describe("startMockLlm", () => {
  it("answers a text step with a realistic chat completion and records the request", async () => {
    server = await startMockLlm([reply.text("done")]);
    const res = await post(server.baseUrl, request);
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "test-model",
      choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
    });
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: "POST", path: "/v1/chat/completions", body: request, stepIndex: 0 });
    expect(server.requests[0]?.headers.authorization).toBe("Bearer k");
    expect(server.remaining()).toBe(0);
  });

  it("sends tool calls with JSON-encoded object arguments, raw string arguments and generated ids", async () => {
    server = await startMockLlm([reply.toolCalls([{ name: "ls", arguments: { dir: "/tmp" } }, { name: "cat", arguments: "{not json", id: "call_x" }], "looking")]);
    const body = await (await post(server.baseUrl, request)).json();
    const message = body.choices[0].message;
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(message.content).toBe("looking");
    expect(message.tool_calls).toEqual([
      { id: "call_1_1", type: "function", function: { name: "ls", arguments: '{"dir":"/tmp"}' } },
      { id: "call_x", type: "function", function: { name: "cat", arguments: "{not json" } },
    ]);
  });

  it("derives usage from the request deterministically unless the step sets it", async () => {
    server = await startMockLlm([reply.text("a"), reply.text("a"), reply.text("a", { usage: { prompt_tokens: 7, completion_tokens: 3 } })]);
    const first = await (await post(server.baseUrl, request)).json();
    const second = await (await post(server.baseUrl, request)).json();
    const third = await (await post(server.baseUrl, request)).json();
    expect(first.usage).toEqual(second.usage);
    expect(first.usage.prompt_tokens).toBeGreaterThan(0);
    expect(third.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
  });

  it("answers error statuses with an OpenAI-style error body and Retry-After headers", async () => {
    server = await startMockLlm([fault.status(429, { retryAfter: "2", retryAfterMs: 1500, message: "slow down" }), fault.status(500)]);
    const limited = await post(server.baseUrl, request);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(limited.headers.get("retry-after-ms")).toBe("1500");
    expect(await limited.json()).toEqual({ error: { message: "slow down", type: "mock_error", code: null } });
    expect((await post(server.baseUrl, request)).status).toBe(500);
  });

  it("sends raw replies exactly as scripted", async () => {
    server = await startMockLlm([reply.raw(418, "teapot", { "x-extra": "yes" })]);
    const res = await post(server.baseUrl, request);
    expect(res.status).toBe(418);
    expect(res.headers.get("x-extra")).toBe("yes");
    expect(await res.text()).toBe("teapot");
  });

  it("cuts the connection mid-body on reset", async () => {
    server = await startMockLlm([fault.reset()]);
    const res = await post(server.baseUrl, request);
    await expect(res.text()).rejects.toThrow();
  });

  it("sends a body that is not JSON on invalidJson and an empty choices list on noChoices", async () => {
    server = await startMockLlm([fault.invalidJson(), fault.noChoices()]);
    await expect((await post(server.baseUrl, request)).json()).rejects.toThrow(SyntaxError);
    expect((await (await post(server.baseUrl, request)).json()).choices).toEqual([]);
  });

  it("answers a delayed step with the reply it wraps", async () => {
    server = await startMockLlm([fault.delay(50, reply.text("late"))]);
    const body = await (await post(server.baseUrl, request)).json();
    expect(body.choices[0].message.content).toBe("late");
  });

  it("lets a client give up on a delayed step and goes on with the next one", async () => {
    server = await startMockLlm([fault.delay(10_000, reply.text("never seen")), reply.text("next")]);
    const giveUp = new AbortController();
    const first = fetch(`${server.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify(request), signal: giveUp.signal });
    // Given up once the server holds it, whenever that is on a busy machine.
    await waitFor(() => server!.requests.length === 1, 30_000, "the first request to reach the server");
    giveUp.abort();
    await expect(first).rejects.toThrow();
    const body = await (await post(server.baseUrl, request)).json();
    expect(body.choices[0].message.content).toBe("next");
  });

  it("never answers a hang, and close() ends the waiting request", async () => {
    server = await startMockLlm([fault.hang()]);
    const pending = post(server.baseUrl, request);
    const outcome = await Promise.race([pending.then(() => "answered", () => "failed"), new Promise((resolve) => setTimeout(() => resolve("waiting"), 200))]);
    expect(outcome).toBe("waiting");
    await server.close();
    server = undefined;
    await expect(pending).rejects.toThrow();
  });

  it("answers 500 with a clear message when the script is exhausted, and records the request", async () => {
    server = await startMockLlm([reply.text("only one")]);
    await post(server.baseUrl, request);
    const res = await post(server.baseUrl, request);
    expect(res.status).toBe(500);
    expect((await res.json()).error.message).toMatch(/script exhausted after 1 replies/);
    expect(server.requests.map((r) => r.stepIndex)).toEqual([0, null]);
  });

  it("appends steps pushed after start and accepts the path without /v1", async () => {
    server = await startMockLlm();
    server.push(reply.text("late"));
    const body = await (await post(server.baseUrl.replace(/\/v1$/, ""), request)).json();
    expect(body.choices[0].message.content).toBe("late");
  });

  it("lets a function choose each step from the request", async () => {
    server = await startMockLlm((req, index) => reply.text(`#${index} ${JSON.stringify((req.body as { model: string }).model)}`));
    await post(server.baseUrl, request);
    const body = await (await post(server.baseUrl, request)).json();
    expect(body.choices[0].message.content).toBe('#1 "test-model"');
  });

  it("answers 404 for other paths and records them", async () => {
    server = await startMockLlm([reply.text("unused")]);
    const res = await post(server.baseUrl, request, "/embeddings");
    expect(res.status).toBe(404);
    expect(server.requests[0]?.stepIndex).toBeNull();
    expect(server.remaining()).toBe(1);
  });

  it("refuses with 400, using no step, a request whose tool result answers no call of the assistant message before it", async () => {
    server = await startMockLlm([reply.text("done")]);
    const orphan = { model: "m", messages: [{ role: "user", content: "go" }, { role: "assistant", content: null, tool_calls: [{ id: "a", type: "function", function: { name: "ls", arguments: "{}" } }] }, { role: "tool", tool_call_id: "b", content: "x" }] };
    const refused = await post(server.baseUrl, orphan);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toMatch(/answers 'b', which is not a call/);
    expect(server.violations).toEqual([expect.stringMatching(/^request 1: message 2 \(tool\) answers 'b'/), expect.stringMatching(/^request 1: the calls \["a"\] of message 1 have no tool result$/)]);
    expect(server.remaining()).toBe(1);
    const answered = { ...orphan, messages: [...orphan.messages.slice(0, 2), { role: "tool", tool_call_id: "a", content: "x" }] };
    expect((await post(server.baseUrl, answered)).status).toBe(200);
  });

  it("refuses an Anthropic request whose tool_use has no tool_result in the next turn", async () => {
    server = await startMockLlm([reply.text("done")], { protocol: "anthropic" });
    const body = { model: "m", max_tokens: 10, system: [{ type: "text", text: "s", cache_control: { type: "ephemeral" } }], messages: [{ role: "user", content: [{ type: "text", text: "go" }] }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "ls", input: {} }] }, { role: "user", content: [{ type: "text", text: "and?" }] }] };
    const refused = await post(server.baseUrl, body, "/messages");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(server.violations).toEqual([expect.stringMatching(/tool results \[\] do not answer the calls \["t1"\]/)]);
  });
});
