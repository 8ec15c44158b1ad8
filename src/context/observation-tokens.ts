// Bounds one observation in tokens as well as bytes: its head and tail kept, as the byte bound does, until it fits.
import { boundText } from "../tools/output-bound.js";
import { loadTokenCounter } from "./token-counter.js";

/**
 * `text` unchanged when it has at most `maxTokens` tokens by the model's counter; otherwise cut
 * in the middle (boundText's marker says how many bytes went) to at most `maxTokens`, the marker
 * aside. A text with no more bytes than `maxTokens` fits without loading a tokenizer.
 */
export async function boundTokens(text: string, maxTokens: number, model: string): Promise<string> {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxTokens) return text;
  const counter = await loadTokenCounter(model);
  let tokens = counter.count(text);
  if (tokens <= maxTokens) return text;
  let budget = bytes;
  for (;;) {
    // Shrink in proportion to the excess, a little more, so a few rounds at most settle it.
    budget = Math.max(1, Math.floor((budget * maxTokens) / tokens * 0.97));
    const cut = boundText(text, budget);
    tokens = counter.count(withoutMarker(cut));
    if (tokens <= maxTokens || budget === 1) return cut;
  }
}

function withoutMarker(cut: string): string {
  return cut.replace(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/, "");
}
