// "Context length exceeded" recognised in each provider's words, as a pure function; the servers with a recorded overflow are also tested on it in chat-completions/recorded-replies.test.ts.
import { describe, expect, it } from "vitest";
import { contextOverflow } from "../../src/llm/context-overflow.js";

const overflows: [string, number, string, string | undefined, { limitTokens?: number; requestedTokens?: number }][] = [
  ["OpenAI", 400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.", "context_length_exceeded", { limitTokens: 128000, requestedTokens: 130532 }],
  ["vLLM", 400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4500 in the messages, 500 in the completion). Please reduce the length of the messages or completion.", undefined, { limitTokens: 4096, requestedTokens: 5000 }],
  ["Anthropic", 400, "prompt is too long: 210000 tokens > 200000 maximum", undefined, { limitTokens: 200000, requestedTokens: 210000 }],
  ["Gemini", 400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", undefined, { limitTokens: 1048576, requestedTokens: 1200000 }],
  ["Mistral", 400, "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length", undefined, { limitTokens: 32768, requestedTokens: 40000 }],
  ["TGI", 422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`", undefined, { limitTokens: 4096 }],
  ["llama.cpp", 400, "the request exceeds the available context size, try increasing it", "exceed_context_size_error", {}],
  ["OpenRouter", 400, "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens (240000 of text input, 10000 in the output).", undefined, { limitTokens: 200000, requestedTokens: 250000 }],
  ["Moonshot", 400, "Invalid request: Your request exceeded model token limit: 8192", undefined, {}],
  ["Anthropic, prompt and max_tokens", 400, "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again", undefined, { limitTokens: 200000, requestedTokens: 207951 }],
  ["SGLang", 400, "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens).", undefined, { limitTokens: 59862, requestedTokens: 160062 }],
  ["xAI", 400, "This model's maximum prompt length is 131072 but the request contains 140000 tokens.", undefined, { limitTokens: 131072, requestedTokens: 140000 }],
];

describe("contextOverflow", () => {
  for (const [server, status, message, code, sizes] of overflows) {
    it(`recognises ${server}'s wording, with the sizes it names`, () => {
      expect(contextOverflow(status, { message, ...(code ? { code } : {}) })).toEqual(sizes);
    });
  }

  it("recognises the code alone", () => {
    expect(contextOverflow(400, { message: "too long", code: "context_length_exceeded" })).toEqual({});
  });

  it("is not a rate limit counted in tokens, a server failure, or another refusal", () => {
    expect(contextOverflow(413, { message: "Request too large for model in organization on tokens per minute (TPM): Limit 6000, Requested 8000. Please reduce the length of the messages", code: "rate_limit_exceeded" })).toBeNull();
    expect(contextOverflow(429, { message: "maximum context length exceeded" })).toBeNull();
    expect(contextOverflow(503, { message: "maximum context length exceeded" })).toBeNull();
    expect(contextOverflow(400, { message: "Unsupported value: 'temperature' does not support 0.2" })).toBeNull();
    expect(contextOverflow(400, undefined)).toBeNull();
  });
});
