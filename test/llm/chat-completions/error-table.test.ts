// Chat Completions' error table: an error a server sends in place of a completion (HTTP 200) is retried as the status its code stands for, as Anthropic's and Responses' are.
import { afterEach, describe, expect, it } from "vitest";
import type { LlmRequest } from "../../../src/conversation.js";
import { LlmError } from "../../../src/errors.js";
import { createOpenAiProvider } from "../../../src/llm/chat-completions/provider.js";
import { reply, startMockLlm, type MockLlm } from "../../support/mock-llm.js";

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request: LlmRequest = { model: "m", messages: [{ role: "user", content: "go" }], tools: [], params: {} };
const inPlaceOfReply = (code: string) => reply.raw(200, { error: { message: `test server: ${code}`, type: "requests", code } });

describe("an error in place of a completion", () => {
  it("rate_limit_exceeded is retried with backoff as a 429 is, past the one retry an unusable reply gets", async () => {
    server = await startMockLlm([inPlaceOfReply("rate_limit_exceeded"), inPlaceOfReply("rate_limit_exceeded"), reply.text("after the limit")]);
    const provider = createOpenAiProvider({ apiKey: "sk-table-0123456789", baseUrl: server.baseUrl, retryBaseMs: 1, maxRetries: 3 }, {});
    const reasons: string[] = [];
    const result = await provider.complete(request, { onFailedAttempt: ({ reason }) => reasons.push(reason) });
    expect(result.content).toBe("after the limit");
    expect(reasons).toEqual(['an error (429) in place of a reply: "test server: rate_limit_exceeded"', 'an error (429) in place of a reply: "test server: rate_limit_exceeded"']);
  });

  it("server_error is a 500: retried, and named so when the retries run out", async () => {
    server = await startMockLlm([inPlaceOfReply("server_error"), inPlaceOfReply("server_error")]);
    const provider = createOpenAiProvider({ apiKey: "sk-table-0123456789", baseUrl: server.baseUrl, retryBaseMs: 1, maxRetries: 1 }, {});
    const err = await provider.complete(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as Error).message).toMatch(/failed after 2 attempts: an error \(500\) in place of a reply: "test server: server_error"/);
  });

  it("a code outside the table is not a status, whatever its name (an inherited property of an object is not in the table)", async () => {
    server = await startMockLlm([inPlaceOfReply("constructor"), inPlaceOfReply("constructor")]);
    const provider = createOpenAiProvider({ apiKey: "sk-table-0123456789", baseUrl: server.baseUrl, retryBaseMs: 1, maxRetries: 3 }, {});
    const err = await provider.complete(request).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/failed after 2 attempts: an error in place of a reply: "test server: constructor"/);
  });
});
