// The usage object of a Chat Completions reply, in every form servers send, as our Usage.
import type { Usage } from "../../journal/events.js";
import { isRecord } from "../is-record.js";
import { tokenCount as count } from "../token-count.js";

/**
 * prompt_tokens and completion_tokens are required; the rest is read where each server puts it:
 * cached prompt tokens in `prompt_tokens_details.cached_tokens` (OpenAI, OpenRouter, xAI, Z.ai),
 * `prompt_cache_hit_tokens` (DeepSeek), `num_cached_tokens` (Mistral) or `cached_tokens`
 * (Moonshot, Together); reasoning tokens in `completion_tokens_details.reasoning_tokens`; the
 * provider's own price in `cost` (OpenRouter). Tokens that `total_tokens` counts beyond prompt and
 * completion are reasoning the completion count left out (Gemini, xAI): they are output too.
 */
export function toUsage(usage: unknown): Usage | null {
  if (!isRecord(usage)) return null;
  const prompt = count(usage.prompt_tokens);
  const completion = count(usage.completion_tokens);
  if (prompt === undefined || completion === undefined) return null;
  const total = count(usage.total_tokens);
  const uncounted = total !== undefined ? total - prompt - completion : 0;
  const cached = count(field(usage.prompt_tokens_details, "cached_tokens")) ?? count(usage.prompt_cache_hit_tokens) ?? count(usage.num_cached_tokens) ?? count(usage.cached_tokens);
  const reasoning = count(field(usage.completion_tokens_details, "reasoning_tokens")) ?? (uncounted > 0 ? uncounted : undefined);
  const cost = usage.cost;
  return {
    input_tokens: prompt,
    output_tokens: completion + Math.max(0, uncounted),
    ...(cached !== undefined ? { cached_input_tokens: Math.min(cached, prompt) } : {}),
    ...(reasoning !== undefined ? { reasoning_tokens: reasoning } : {}),
    ...(typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? { cost_usd: cost } : {}),
  };
}

function field(record: unknown, name: string): unknown {
  return isRecord(record) ? record[name] : undefined;
}
