// Limits a run waits out instead of failing: a rate limit asking for longer than llm.max_retry_wait_ms, one outlasting the retries, an account out of quota — each a DeferredError with its reason and resume_after; short waits are slept through.
import { afterEach, describe, expect, it } from "vitest";
import type { LlmRequest } from "../../src/conversation.js";
import { DeferredError, LlmError } from "../../src/errors.js";
import { createAnthropicProvider } from "../../src/llm/anthropic/provider.js";
import { createOpenAiProvider } from "../../src/llm/chat-completions/provider.js";
import type { ProviderConfig } from "../../src/llm/provider-settings.js";
import type { FailedAttempt } from "../../src/llm/types.js";
import { fault, reply, startMockLlm, type MockLlm, type Protocol, type Step } from "../support/mock-llm.js";
import { recordedStep } from "../support/recorded.js";

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request: LlmRequest = { model: "m", messages: [{ role: "user", content: "go" }], tools: [], params: {} };

async function provider(steps: Step[], config: Partial<ProviderConfig> = {}, protocol: Protocol = "chat-completions") {
  server = await startMockLlm(steps, { protocol });
  const settings = { apiKey: "sk-limits-0123456789", baseUrl: server.baseUrl, retryBaseMs: 1, ...config };
  return protocol === "anthropic" ? createAnthropicProvider(settings, {}) : createOpenAiProvider(settings, {});
}

/** The deferral a call ends with, and when it was thrown by this host's clock. */
async function deferralOf(call: Promise<unknown>): Promise<{ error: DeferredError; before: number; after: number }> {
  const before = Date.now();
  const error = await call.then(() => undefined, (e: unknown) => e);
  const after = Date.now();
  if (!(error instanceof DeferredError)) throw new Error(`expected a DeferredError, got ${String(error)}`);
  return { error, before, after };
}

/** resume_after lies `waitMs` after some moment of the call. */
function expectResumeIn(resumeAfter: string | null, waitMs: number, { before, after }: { before: number; after: number }): void {
  expect(resumeAfter).not.toBeNull();
  const at = Date.parse(resumeAfter!);
  expect(at).toBeGreaterThanOrEqual(before + waitMs);
  expect(at).toBeLessThanOrEqual(after + waitMs);
}

const limited = (status: number, headers: Record<string, string>): Step => reply.raw(status, { error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } }, headers);

describe("a rate limit longer than llm.max_retry_wait_ms", () => {
  it("Retry-After: 3600 defers RATE_LIMITED at once, resume_after an hour on, nothing more sent", async () => {
    const model = await provider([fault.status(429, { retryAfter: "3600", message: "slow down" }), reply.text("never")]);
    const seen: FailedAttempt[] = [];
    const deferred = await deferralOf(model.complete(request, { onFailedAttempt: (attempt) => seen.push(attempt) }));
    expect(deferred.error.deferral.reason).toBe("RATE_LIMITED");
    expectResumeIn(deferred.error.deferral.resumeAfter, 3_600_000, deferred);
    expect(deferred.error.message).toMatch(/rate limited \(HTTP 429: "slow down"\) and asks to wait 3600 s \(retry-after\), longer than llm\.max_retry_wait_ms \(60 s\)/);
    expect(server!.requests).toHaveLength(1);
    // The attempt is journaled like any failed one, with no retry after it.
    expect(seen.map((attempt) => attempt.retryInMs)).toEqual([null]);
  });

  it("OpenAI's reset headers, when no Retry-After: the latest reset of the limits that ran out (x-ratelimit-reset-requests 2h0m0s)", async () => {
    const model = await provider([limited(429, { "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2h0m0s", "x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "9.24s" })]);
    const deferred = await deferralOf(model.complete(request));
    expect(deferred.error.deferral.reason).toBe("RATE_LIMITED");
    expectResumeIn(deferred.error.deferral.resumeAfter, 7_200_000, deferred);
    expect(deferred.error.message).toContain("(x-ratelimit-reset-requests)");
  });

  it("Anthropic's reset headers: an RFC 3339 reset read against the server's Date", async () => {
    const sent = new Date(Math.floor(Date.now() / 1000) * 1000);
    const headers = {
      date: sent.toUTCString(),
      "anthropic-ratelimit-output-tokens-remaining": "0",
      "anthropic-ratelimit-output-tokens-reset": new Date(sent.getTime() + 90 * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    };
    const model = await provider([reply.raw(429, { type: "error", error: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" } }, headers)], {}, "anthropic");
    const deferred = await deferralOf(model.complete(request));
    expect(deferred.error.deferral.reason).toBe("RATE_LIMITED");
    expectResumeIn(deferred.error.deferral.resumeAfter, 90 * 60_000, deferred);
    expect(deferred.error.message).toContain("(anthropic-ratelimit-output-tokens-reset)");
  });

  it("llm.max_retry_wait_ms sets the line: 0 defers any wait a limit asks for; a 503's and a 529's too", async () => {
    for (const status of [429, 503, 529]) {
      await server?.close();
      const model = await provider([fault.status(status, { retryAfterMs: 20 }), reply.text("never")], { maxRetryWaitMs: 0 });
      const deferred = await deferralOf(model.complete(request));
      expect(deferred.error.deferral.reason, String(status)).toBe("RATE_LIMITED");
      expectResumeIn(deferred.error.deferral.resumeAfter, 20, deferred);
      expect(server!.requests).toHaveLength(1);
    }
  });
});

describe("short waits", () => {
  it("a wait within llm.max_retry_wait_ms is slept through and the call retried inside the run", async () => {
    const model = await provider([fault.status(429, { retryAfterMs: 30 }), limited(429, { "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20ms" }), reply.text("after two limits")], { maxRetryWaitMs: 1000 });
    const seen: FailedAttempt[] = [];
    const answer = await model.complete(request, { onFailedAttempt: (attempt) => seen.push(attempt) });
    expect(answer.content).toBe("after two limits");
    expect(seen.map((attempt) => attempt.retryInMs)).toEqual([30, 20]);
    expect(server!.requests).toHaveLength(3);
  });

  it("a 500 asking for more than llm.max_retry_wait_ms is no limit: it waits the most the setting allows and retries", async () => {
    const model = await provider([fault.status(500, { retryAfterMs: 5000 }), reply.text("ok")], { maxRetryWaitMs: 10 });
    const seen: FailedAttempt[] = [];
    expect((await model.complete(request, { onFailedAttempt: (attempt) => seen.push(attempt) })).content).toBe("ok");
    expect(seen.map((attempt) => attempt.retryInMs)).toEqual([10]);
  });
});

describe("a limit that outlasts llm.max_retries", () => {
  it("defers RATE_LIMITED (not FAILED): its time is the server's wait, or one more backoff", async () => {
    const model = await provider([fault.status(529, { message: "Overloaded" }), fault.status(529, { message: "Overloaded" }), fault.status(529, { message: "Overloaded" })], { maxRetries: 2, retryBaseMs: 1 });
    const deferred = await deferralOf(model.complete(request));
    expect(deferred.error.deferral.reason).toBe("RATE_LIMITED");
    expect(deferred.error.deferral.resumeAfter).not.toBeNull();
    expect(deferred.error.message).toMatch(/still rate limited or overloaded after 3 attempts \(HTTP 529: "Overloaded"\)/);
    expect(server!.requests).toHaveLength(3);
  });

  it("a failing server (500) that outlasts them still fails: it is no limit to wait for", async () => {
    const model = await provider([fault.status(500), fault.status(500)], { maxRetries: 1 });
    const error = await model.complete(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
  });
});

describe("an account out of quota (recorded bodies)", () => {
  it("OpenAI's 429 insufficient_quota is QUOTA_EXHAUSTED, not retried, its time unknown", async () => {
    const model = await provider([recordedStep("openai-chat/error-insufficient-quota-429"), reply.text("never")], { maxRetries: 3 });
    const deferred = await deferralOf(model.complete(request));
    expect(deferred.error.deferral).toMatchObject({ reason: "QUOTA_EXHAUSTED", resumeAfter: null });
    expect(deferred.error.message).toMatch(/says the account is out of quota or credit \(HTTP 429: "You exceeded your current quota, please check your plan and billing details/);
    expect(server!.requests).toHaveLength(1);
  });

  it("Anthropic's 400 'credit balance is too low' (X-Should-Retry: false) is QUOTA_EXHAUSTED, not a refusal", async () => {
    const model = await provider([recordedStep("anthropic/error-credit-balance-too-low-400"), reply.text("never")], { maxRetries: 3 }, "anthropic");
    const deferred = await deferralOf(model.complete(request));
    expect(deferred.error.deferral).toMatchObject({ reason: "QUOTA_EXHAUSTED", resumeAfter: null });
    expect(deferred.error.message).toContain("Your credit balance is too low to access the Anthropic API");
    expect(server!.requests).toHaveLength(1);
  });

  it("Anthropic's spend-cap 429 (documentation example only: no recording exists) is QUOTA_EXHAUSTED until the time it names", async () => {
    // The body of platform.claude.com/docs/api/rate-limits, "tier monthly spend cap": no retry-after header.
    const body = {
      type: "error",
      error: {
        type: "rate_limit_error",
        message: "You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on 2026-09-01 at 00:00 UTC.",
        details: { error_code: "enforced_spend_limit_reached" },
      },
      request_id: "req_documented",
    };
    const model = await provider([reply.raw(429, body), reply.text("never")], { maxRetries: 3 }, "anthropic");
    const deferred = await deferralOf(model.complete(request));
    expect(deferred.error.deferral).toMatchObject({ reason: "QUOTA_EXHAUSTED", resumeAfter: "2026-09-01T00:00:00.000Z" });
    expect(server!.requests).toHaveLength(1);
  });
});
