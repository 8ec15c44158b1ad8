// The usage of an Anthropic Messages reply as our Usage: cache reads and cache writes kept apart, both counted in the input.
import type { Usage } from "../../journal/events.js";
import { isRecord } from "../is-record.js";
import { tokenCount as count } from "../token-count.js";

/**
 * Anthropic's `input_tokens` counts only the prompt after the last cache breakpoint: the whole
 * prompt is that plus `cache_read_input_tokens` (served from the cache) plus
 * `cache_creation_input_tokens` (written to it, billed at 1.25× for five minutes).
 */
export function toUsage(usage: unknown): Usage | null {
  if (!isRecord(usage)) return null;
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  if (input === undefined || output === undefined) return null;
  const read = count(usage.cache_read_input_tokens);
  const written = count(usage.cache_creation_input_tokens);
  return {
    input_tokens: input + (read ?? 0) + (written ?? 0),
    output_tokens: output,
    ...(read !== undefined ? { cached_input_tokens: read } : {}),
    ...(written !== undefined ? { cache_write_input_tokens: written } : {}),
  };
}
