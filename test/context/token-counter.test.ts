// Token counting: the model family's encoding or the estimate, the known windows, the budget, and an observation cut to a token bound.
import { describe, expect, it } from "vitest";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { contextBudget, replyReserve } from "../../src/context/budget.js";
import { requestedReplyTokens } from "../../src/llm/reply-tokens.js";
import { modelFamily } from "../../src/context/model-windows.js";
import { boundTokens } from "../../src/context/observation-tokens.js";
import { ContextConfigSchema } from "../../src/context/schema.js";
import { ESTIMATE_COUNTER, loadTokenCounter } from "../../src/context/token-counter.js";

const journalOnly = ContextConfigSchema.parse({ sources: [{ type: "journal" }] });

describe("token counters", () => {
  it("counts OpenAI models with their encoding, special-token text included, and the rest with the 3-bytes estimate", async () => {
    const text = "Delta rebuilds the context from the journal <|endoftext|> every iteration.";
    const o200k = await loadTokenCounter("gpt-4o-mini");
    expect(o200k.name).toBe("o200k_base");
    expect(o200k.count(text)).toBe(countTokens(text, { disallowedSpecial: new Set() }));
    expect((await loadTokenCounter("openai/gpt-5-mini")).name).toBe("o200k_base");
    expect((await loadTokenCounter("gpt-4-0613")).name).toBe("cl100k_base");
    expect(await loadTokenCounter("claude-sonnet-4-5")).toBe(ESTIMATE_COUNTER);
    expect(ESTIMATE_COUNTER.count("abcdefg")).toBe(3);
    expect(ESTIMATE_COUNTER.count("é")).toBe(1);
  });

  it("knows the window of common models by name, ignoring a router prefix, and none of open models", () => {
    expect(modelFamily("gpt-4o-mini").contextWindow).toBe(128_000);
    expect(modelFamily("openai/gpt-4.1").contextWindow).toBe(1_047_576);
    expect(modelFamily("anthropic/claude-3.5-sonnet").contextWindow).toBe(200_000);
    expect(modelFamily("o1-mini").contextWindow).toBe(128_000);
    expect(modelFamily("o3").contextWindow).toBe(200_000);
    expect(modelFamily("llama3.1:8b")).toEqual({ contextWindow: null, encoding: null, outputLimit: null });
  });
});

describe("contextBudget", () => {
  it("keeps llm.max_tokens for the reply, else a quarter of the window up to 4096", () => {
    expect(replyReserve(1_000, 128_000)).toBe(1_000);
    expect(replyReserve(null, 128_000)).toBe(4_096);
    expect(replyReserve(null, 8_000)).toBe(2_000);
  });

  it("keeps for the reply the max_tokens Anthropic's requests carry when llm.max_tokens is not set: 8192 plus the thinking budget", () => {
    // As run/loop-ports.ts makes it: the provider's max_tokens (llm/reply-tokens.ts) handed to the budget.
    const anthropic = (llm: { model: string; max_tokens?: number; thinking?: { budget_tokens: number } }) =>
      contextBudget(llm, journalOnly, requestedReplyTokens("anthropic", llm.max_tokens, llm.thinking?.budget_tokens));
    expect(anthropic({ model: "claude-sonnet-4-5" }).maxReplyTokens).toBe(8_192);
    expect(anthropic({ model: "claude-sonnet-4-5", thinking: { budget_tokens: 2_048 } }).maxReplyTokens).toBe(10_240);
    expect(anthropic({ model: "claude-sonnet-4-5", max_tokens: 1_000 }).maxReplyTokens).toBe(1_000);
    // The same model through a Chat Completions router sends no max_tokens: the server decides, a quarter of the window up to 4096 is kept.
    expect(contextBudget({ model: "anthropic/claude-sonnet-4-5" }, journalOnly).maxReplyTokens).toBeNull();
  });

  it("bounds an observation to a quarter of the tightest token limit, and not at all without one", () => {
    expect(contextBudget({ model: "gpt-4o", max_tokens: 1_000 }, journalOnly)).toMatchObject({ contextWindow: 128_000, observationTokens: 31_750 });
    const tight = ContextConfigSchema.parse({ sources: [{ type: "journal", max_tokens: 12_000, max_iterations: 30 }, { type: "journal", max_iterations: 20 }] });
    expect(contextBudget({ model: "gpt-4o" }, tight)).toMatchObject({ maxTokens: 12_000, maxIterations: 20, observationTokens: 3_000 });
    expect(contextBudget({ model: "local-model" }, journalOnly)).toMatchObject({ contextWindow: null, observationTokens: null });
    expect(contextBudget({ model: "local-model", context_window: 32_768 }, journalOnly).contextWindow).toBe(32_768);
  });
});

describe("boundTokens", () => {
  const words = Array.from({ length: 6_000 }, (_, i) => `w${(i * 7_919) % 10_007}`).join(" ");

  it("leaves a text within the bound as it is", async () => {
    expect(await boundTokens("short text", 5, "gpt-4o")).toBe("short text");
    expect(await boundTokens(words, 100_000, "gpt-4o")).toBe(words);
  });

  it("cuts a longer one to the bound by its own encoding, head and tail kept around the marker", async () => {
    const cut = await boundTokens(words, 1_000, "gpt-4o");
    const [head, tail] = cut.split(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/);
    expect(words.startsWith(head!)).toBe(true);
    expect(words.endsWith(tail!)).toBe(true);
    const kept = countTokens(head! + tail!, { disallowedSpecial: new Set() });
    expect(kept).toBeLessThanOrEqual(1_000);
    expect(kept).toBeGreaterThan(900);
  });

  it("cuts by the estimate for models without an encoding", async () => {
    const cut = await boundTokens(words, 1_000, "claude-sonnet-4-5");
    expect(ESTIMATE_COUNTER.count(cut.replace(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/, ""))).toBeLessThanOrEqual(1_000);
  });
});
