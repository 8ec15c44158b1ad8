// What the engine knows about a model from its name: the context window it accepts, the longest reply it writes, and the tokenizer that fits it.

interface ModelFamily {
  /** Tokens the model accepts, prompt and reply together (its prompt limit where that is smaller); null when unknown. */
  contextWindow: number | null;
  /** The longest reply it writes, reasoning included, as the provider publishes it; null when unknown or shared with the window. */
  outputLimit: number | null;
  /** The gpt-tokenizer encoding of the family, or null: the estimate counts for it. */
  encoding: "o200k_base" | "cl100k_base" | null;
}

// First match wins. Windows as the providers publish them; gpt-5's is its 272k input limit, not the
// 400k that includes the reply. Local servers (Ollama, vLLM, llama.cpp) set their own window, so
// open models are left out: set llm.context_window for them. Output limits only where one number holds for the
// whole family (a budget reserves it for a reply when llm.max_tokens is not set).
const FAMILIES: readonly [RegExp, ModelFamily][] = [
  [/^gpt-5/, { contextWindow: 272_000, outputLimit: 128_000, encoding: "o200k_base" }],
  [/^gpt-4\.1/, { contextWindow: 1_047_576, outputLimit: 32_768, encoding: "o200k_base" }],
  [/^(gpt-4o|chatgpt-4o|gpt-4\.5)/, { contextWindow: 128_000, outputLimit: 16_384, encoding: "o200k_base" }],
  [/^o1-(mini|preview)/, { contextWindow: 128_000, outputLimit: null, encoding: "o200k_base" }],
  [/^o[134](-|$)/, { contextWindow: 200_000, outputLimit: 100_000, encoding: "o200k_base" }],
  [/^gpt-oss/, { contextWindow: 131_072, outputLimit: null, encoding: "o200k_base" }],
  [/^gpt-4-(turbo|\d{4}-preview)/, { contextWindow: 128_000, outputLimit: 4_096, encoding: "cl100k_base" }],
  [/^gpt-4-32k/, { contextWindow: 32_768, outputLimit: null, encoding: "cl100k_base" }],
  [/^gpt-4(-|$)/, { contextWindow: 8_192, outputLimit: null, encoding: "cl100k_base" }],
  [/^gpt-3\.5-turbo/, { contextWindow: 16_385, outputLimit: 4_096, encoding: "cl100k_base" }],
  [/^claude-/, { contextWindow: 200_000, outputLimit: null, encoding: null }],
  [/^gemini-(1\.5|2|3)/, { contextWindow: 1_048_576, outputLimit: null, encoding: null }],
  [/^deepseek-(chat|reasoner)/, { contextWindow: 128_000, outputLimit: null, encoding: null }],
  [/^grok-4/, { contextWindow: 256_000, outputLimit: null, encoding: null }],
  [/^grok-3/, { contextWindow: 131_072, outputLimit: null, encoding: null }],
];

const UNKNOWN: ModelFamily = { contextWindow: null, outputLimit: null, encoding: null };

/** The family of a model name, with any router prefix (`openai/gpt-4o`, `anthropic/claude-…`) ignored. */
export function modelFamily(model: string): ModelFamily {
  const name = model.toLowerCase().slice(model.lastIndexOf("/") + 1);
  return FAMILIES.find(([pattern]) => pattern.test(name))?.[1] ?? UNKNOWN;
}
