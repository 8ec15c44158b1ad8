// The llm block's schema decides what a request carries: only its sampling fields, so a setting added for the engine never reaches a model server.
import { describe, expect, it } from "vitest";
import { LlmConfigSchema, samplingParams } from "../../src/llm/settings-schema.js";

describe("samplingParams", () => {
  it("keeps the sampling fields agent.yaml set and drops every other llm field, defaults included", () => {
    const llm = LlmConfigSchema.parse({ model: "m", provider: "anthropic", temperature: 0, stop: ["x"], thinking: { budget_tokens: 2048 }, base_url: "http://127.0.0.1:1/v1", context_window: 1000, stream: true });
    expect(samplingParams(llm)).toEqual({ temperature: 0, stop: ["x"], thinking: { budget_tokens: 2048 } });
  });

  it("a field of the llm block outside the sampling fields is never a request parameter, whatever its name", () => {
    const params = new Set(Object.keys(samplingParams(LlmConfigSchema.parse({ model: "m", temperature: 1, max_tokens: 1, top_p: 1, presence_penalty: 0, frequency_penalty: 0, stop: "s", seed: 1, reasoning_effort: "low", thinking: { budget_tokens: 1024 } }))));
    const engineOnly = Object.keys(LlmConfigSchema.shape).filter((field) => !params.has(field));
    expect(engineOnly.sort()).toEqual(["base_url", "batch", "budget", "context_window", "fallback", "idle_timeout_ms", "max_reply_bytes", "max_reply_depth", "max_reply_ms", "max_retries", "max_retry_wait_ms", "max_tool_calls", "model", "pricing", "provider", "stream", "timeout_ms"]);
  });
});
