// Counts the tokens of a text: the model family's own BPE (gpt-tokenizer, loaded on first need) or a documented estimate.
import { modelFamily } from "./model-windows.js";

export interface TokenCounter {
  /** `o200k_base`, `cl100k_base` (gpt-tokenizer) or `estimate`. */
  readonly name: string;
  count(text: string): number;
}

/**
 * The estimate for model families with no tokenizer here: one token per 3 UTF-8 bytes. OpenAI's
 * encodings give 3.8–4.2 bytes a token on English prose, code and JSON and Claude's about a fifth
 * more tokens, so it errs on the safe side for them; hashes and random ids (1.6–2.5 bytes a
 * token) are what the calibration against the provider's reported prompt tokens is for.
 */
const ESTIMATE_BYTES_PER_TOKEN = 3;

export function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / ESTIMATE_BYTES_PER_TOKEN);
}

export const ESTIMATE_COUNTER: TokenCounter = {
  name: "estimate",
  count: (text) => estimateTokens(Buffer.byteLength(text, "utf8")),
};

interface Encoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

// Tool output may quote `<|endoftext|>` and the like: it is text to count, never a control token.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

const loaded = new Map<string, Promise<TokenCounter>>();

/**
 * The counter for a model: its BPE when gpt-tokenizer has the model's encoding, else the estimate.
 * The encoding is imported on the first call only (it costs a run about 80–250 ms and 60–90 MB),
 * so runs that never count tokens never load it.
 */
export function loadTokenCounter(model: string): Promise<TokenCounter> {
  const encoding = modelFamily(model).encoding;
  if (encoding === null) return Promise.resolve(ESTIMATE_COUNTER);
  let counter = loaded.get(encoding);
  if (!counter) {
    counter = importEncoding(encoding).then((module) => ({ name: encoding, count: (text: string) => module.countTokens(text, AS_TEXT) }));
    loaded.set(encoding, counter);
  }
  return counter;
}

// One literal specifier per encoding, so the bundler leaves each as its own lazily required module.
function importEncoding(encoding: "o200k_base" | "cl100k_base"): Promise<Encoding> {
  return encoding === "o200k_base" ? import("gpt-tokenizer/encoding/o200k_base") : import("gpt-tokenizer/encoding/cl100k_base");
}
