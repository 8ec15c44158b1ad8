// The usage of an OpenAI Responses reply as our Usage: cached input, input written to the cache, reasoning output.
import type { Usage } from "../../journal/events.js";
import { isRecord } from "../is-record.js";
import { tokenCount as count } from "../token-count.js";

/** `input_tokens` counts the whole prompt, cached tokens included; `output_tokens` the whole reply, reasoning included. */
export function toUsage(usage: unknown): Usage | null {
  if (!isRecord(usage)) return null;
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  if (input === undefined || output === undefined) return null;
  const inputDetails = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const cached = count(inputDetails.cached_tokens);
  const written = count(inputDetails.cache_write_tokens);
  const reasoning = count(isRecord(usage.output_tokens_details) ? usage.output_tokens_details.reasoning_tokens : undefined);
  return {
    input_tokens: input,
    output_tokens: output,
    ...(cached !== undefined ? { cached_input_tokens: Math.min(cached, input) } : {}),
    ...(written !== undefined ? { cache_write_input_tokens: written } : {}),
    ...(reasoning !== undefined ? { reasoning_tokens: reasoning } : {}),
  };
}
