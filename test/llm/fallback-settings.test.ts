// llm.fallback and a per-model llm.pricing in agent.yaml: what is read, and a bad entry refused naming the file, the field and the fix.
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { ConfigError } from "../../src/errors.js";
import { pricingOf } from "../../src/llm/settings-schema.js";
import { makeAgent } from "../agent/helpers.js";

const agentYaml = (llm: string): string => `name: a\nllm:\n  model: claude-sonnet-4-5\n${llm}`;

describe("llm.fallback and llm.pricing per model", () => {
  it("reads model names and other endpoints, and prices each model by its own entry", async () => {
    const home = await makeAgent({
      "agent.yaml": agentYaml(
        "  fallback:\n    - claude-haiku-4-5\n    - { provider: openai, model: gpt-5-mini, key_env: OPENAI_API_KEY, base_url: 'http://127.0.0.1:9/v1' }\n" +
          "  pricing:\n    claude-sonnet-4-5: { input_per_million: 3, output_per_million: 15 }\n    gpt-5-mini: { input_per_million: 0.25, output_per_million: 2 }\n",
      ),
    });
    const agent = await loadAgent(home);
    expect(agent.llm.fallback).toEqual(["claude-haiku-4-5", { provider: "openai", model: "gpt-5-mini", key_env: "OPENAI_API_KEY", base_url: "http://127.0.0.1:9/v1" }]);
    expect(pricingOf(agent.llm.pricing, "gpt-5-mini")).toEqual({ input_per_million: 0.25, output_per_million: 2 });
    expect(pricingOf(agent.llm.pricing, "claude-haiku-4-5")).toBeUndefined();
    expect(pricingOf({ input_per_million: 1, output_per_million: 2 }, "any")).toEqual({ input_per_million: 1, output_per_million: 2 });
  });

  it.each([
    ["an endpoint without its key variable", "  fallback:\n    - { provider: openai, model: gpt-5-mini }\n", /llm\.fallback\[0\]: write a model name .*key_env/],
    ["a key variable that is no variable name", "  fallback:\n    - { provider: openai, model: gpt-5-mini, key_env: 'sk-live-123' }\n", /key_env names the environment variable/],
    ["an unknown provider", "  fallback:\n    - { provider: gemini, model: g, key_env: GEMINI_API_KEY }\n", /llm\.fallback\[0\]: .*openai \| anthropic \| openai-responses/],
    ["a price map with a bad entry", "  pricing:\n    m: { input_per_million: 1 }\n", /llm\.pricing: write one price/],
  ])("refuses %s, naming the file and the field", async (_what, llm, message) => {
    const home = await makeAgent({ "agent.yaml": agentYaml(llm) });
    const err = await loadAgent(home).catch((error: unknown) => error);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain("agent.yaml");
    expect((err as Error).message).toMatch(message);
  });
});
