// Which failures hand a call to the next of llm.fallback (recorded bodies of real servers), and what the chain sends each endpoint: only its own reasoning state, only the fields its protocol takes.
import { describe, expect, it } from "vitest";
import { MADE_BY, type LlmRequest } from "../../src/conversation.js";
import { LlmError } from "../../src/errors.js";
import { anthropicProtocol } from "../../src/llm/anthropic/provider.js";
import { chatCompletionsProtocol } from "../../src/llm/chat-completions/provider.js";
import { fallbackChain, type ChainLink } from "../../src/llm/fallback-chain.js";
import { statusFailure } from "../../src/llm/failure.js";
import type { FallbackMove, Provider } from "../../src/llm/types.js";
import { markUnavailable, unavailability } from "../../src/llm/unavailable.js";
import type { WireProtocol } from "../../src/llm/wire-protocol.js";
import { recordedBytes, recordedEntry } from "../support/recorded.js";

const PROTOCOLS: Record<string, WireProtocol> = { anthropic: anthropicProtocol, openai: chatCompletionsProtocol };

/** The failure a protocol reads from a recorded error reply, as its attempt would (nothing echoed). */
function recordedFailure(name: string, protocol: string) {
  const entry = recordedEntry(name);
  const headers = new Headers(entry.headers ?? {});
  return statusFailure(entry.status, headers, recordedBytes(name).toString("utf8"), { errorStatus: PROTOCOLS[protocol]!.errorStatus, refusesEcho: () => false });
}

describe("which failures fall back", () => {
  it.each([
    ["anthropic/error-overloaded-529", "anthropic", "overloaded"],
    ["anthropic/error-not-found-404", "anthropic", "retired"],
    ["openai-chat/error-model-not-found-404", "openai", "retired"],
    ["openai-responses/error-model-not-found-400", "openai", "retired"],
    ["groq/error-model-not-found-404", "openai", "retired"],
    // A rate limit or a quota is the account's, not the model's: the run waits (DEFERRED), it does not move.
    ["anthropic/error-rate-limit-concurrent-429", "anthropic", null],
    ["azure/error-rate-limit-429-retry-after", "openai", null],
    ["openai-chat/error-insufficient-quota-429", "openai", null],
    ["anthropic/error-credit-balance-too-low-400", "anthropic", null],
    ["anthropic/error-prompt-too-long-400", "anthropic", null],
    ["openai-chat/error-unsupported-value-400", "openai", null],
  ] as const)("%s (%s) → %s", (name, protocol, expected) => {
    expect(unavailability(recordedFailure(name, protocol))).toBe(expected);
  });
});

const A = { provider: "anthropic", base_url: "https://a.example/v1" };
const B = { provider: "anthropic", base_url: "https://b.example/v1" };
const SIGNED = { protocol: "anthropic", content: [{ type: "thinking", thinking: "t", signature: "sig" }, { type: "tool_use", id: "toolu_1" }] };

/** A provider that records what it was sent, then fails as `failure` says or answers. */
function fake(sent: LlmRequest[], outcome: "answer" | "retired" | "unmarked"): Provider {
  return {
    name: "fake",
    async complete(request) {
      sent.push(request);
      if (outcome === "retired") throw markUnavailable(new LlmError("gone"), "retired");
      if (outcome === "unmarked") throw new LlmError("HTTP 400");
      return { content: "ok", tool_calls: [], usage: null, model: request.model, finish_reason: "stop" };
    },
  };
}

const request: LlmRequest = {
  model: "primary-model",
  messages: [
    { role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", name: "t", arguments: "{}" }], provider_data: SIGNED, [MADE_BY]: { ...A, model: "primary-model" } },
    { role: "tool", content: "x", tool_call_id: "toolu_1" },
  ],
  tools: [],
  params: { thinking: { budget_tokens: 1024 }, temperature: 0 },
};

describe("the chain", () => {
  it("sends another endpoint of the same protocol no signed thinking, notes it, and stays on the model that answered", async () => {
    const onPrimary: LlmRequest[] = [];
    const onFallback: LlmRequest[] = [];
    const links: ChainLink[] = [
      { provider: fake(onPrimary, "retired"), endpoint: A, model: null, notTaken: [] },
      { provider: fake(onFallback, "answer"), endpoint: B, model: "fallback-model", notTaken: ["thinking"] },
    ];
    const moves: FallbackMove[] = [];
    const chain = fallbackChain(links);
    const reply = await chain.complete(request, { onFallback: (move) => moves.push(move) });
    expect(onPrimary[0]!.messages[1]).toHaveProperty("provider_data", SIGNED);
    expect(onFallback[0]!.messages[1]).not.toHaveProperty("provider_data");
    expect(onFallback[0]!.params).toEqual({ temperature: 0 });
    expect(onFallback[0]!.model).toBe("fallback-model");
    expect(reply).toMatchObject({ answered_by: { ...B, model: "fallback-model" }, reasoning_dropped: 1 });
    expect(moves.map((move) => [move.from.model, move.to.model, move.why])).toEqual([["primary-model", "fallback-model", "retired"]]);
    // The next call of this process goes to the model that answered, not to the retired one.
    await chain.complete(request);
    expect(onPrimary).toHaveLength(1);
    expect(onFallback).toHaveLength(2);
  });

  it("keeps a reply's reasoning state for its own endpoint, and does not move on a failure that is no reason to", async () => {
    const sent: LlmRequest[] = [];
    const same = fallbackChain([{ provider: fake(sent, "answer"), endpoint: A, model: null, notTaken: [] }]);
    const reply = await same.complete(request);
    expect(sent[0]!.messages[1]).toHaveProperty("provider_data", SIGNED);
    expect(reply.reasoning_dropped).toBeUndefined();
    const untouched: LlmRequest[] = [];
    const refused = fallbackChain([
      { provider: fake([], "unmarked"), endpoint: A, model: null, notTaken: [] },
      { provider: fake(untouched, "answer"), endpoint: B, model: "fallback-model", notTaken: [] },
    ]);
    await expect(refused.complete(request)).rejects.toThrow("HTTP 400");
    expect(untouched).toHaveLength(0);
  });
});
