// Sums the usage of a run's model calls, keeping apart what the provider priced itself from what llm.pricing must price.
import type { Usage } from "./events.js";

export interface TokenCounts {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

export interface UsageTotals extends TokenCounts {
  /** Calls that reported usage. */
  calls: number;
  /** Sum of the costs providers reported themselves, and how many calls reported one. */
  reported_cost_usd: number;
  reported_calls: number;
  /** Tokens of the calls that reported no cost: llm.pricing prices these. */
  unpriced: Omit<TokenCounts, "reasoning_tokens">;
}

export function emptyUsageTotals(): UsageTotals {
  return {
    input_tokens: 0,
    cached_input_tokens: 0,
    cache_write_input_tokens: 0,
    output_tokens: 0,
    reasoning_tokens: 0,
    calls: 0,
    reported_cost_usd: 0,
    reported_calls: 0,
    unpriced: { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0 },
  };
}

export function addUsage(totals: UsageTotals, usage: Usage): void {
  // A server that counts more cached tokens than prompt tokens is wrong; never price a negative.
  const cached = Math.min(usage.cached_input_tokens ?? 0, usage.input_tokens);
  const written = Math.min(usage.cache_write_input_tokens ?? 0, usage.input_tokens - cached);
  totals.calls += 1;
  totals.input_tokens += usage.input_tokens;
  totals.cached_input_tokens += cached;
  totals.cache_write_input_tokens += written;
  totals.output_tokens += usage.output_tokens;
  totals.reasoning_tokens += usage.reasoning_tokens ?? 0;
  if (usage.cost_usd !== undefined) {
    totals.reported_cost_usd += usage.cost_usd;
    totals.reported_calls += 1;
    return;
  }
  totals.unpriced.input_tokens += usage.input_tokens;
  totals.unpriced.cached_input_tokens += cached;
  totals.unpriced.cache_write_input_tokens += written;
  totals.unpriced.output_tokens += usage.output_tokens;
}

export function copyUsageTotals(totals: UsageTotals): UsageTotals {
  return { ...totals, unpriced: { ...totals.unpriced } };
}
