// Token usage and its cost: the RunResult's usage totals, priced from agent.yaml's llm.pricing or the provider's own figure.
import type { RunState } from "../journal/run-state.js";
import type { Usage } from "../journal/events.js";
import { addUsage, emptyUsageTotals, type UsageTotals } from "../journal/usage-totals.js";

export interface Pricing {
  input_per_million: number;
  output_per_million: number;
  /** The price of prompt tokens served from the provider's cache; the input price when not given. */
  cached_input_per_million?: number | undefined;
  /** The price of prompt tokens written to the provider's cache (Anthropic charges more for them); the input price when not given. */
  cache_write_input_per_million?: number | undefined;
}

export interface UsageFigures {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  /** null when neither llm.pricing nor the provider gives a price: an unknown cost is never reported as 0. */
  total_cost_usd: number | null;
}

export interface RunUsage extends UsageFigures {
  model_usage: Record<string, UsageFigures>;
}

export const EMPTY_USAGE: RunUsage = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_tokens: 0, total_cost_usd: null, model_usage: {} };

/** The run's usage as the journal sums it, with its cost when a price is known. */
export function priceRunUsage(usage: RunState["usage"], pricing: Pricing | undefined): RunUsage {
  return {
    ...figuresOf(usage.total, pricing),
    model_usage: Object.fromEntries([...usage.byModel].map(([model, totals]) => [model, figuresOf(totals, pricing)])),
  };
}

function figuresOf(totals: UsageTotals, pricing: Pricing | undefined): UsageFigures {
  return {
    input_tokens: totals.input_tokens,
    cached_input_tokens: totals.cached_input_tokens,
    cache_write_input_tokens: totals.cache_write_input_tokens,
    output_tokens: totals.output_tokens,
    reasoning_tokens: totals.reasoning_tokens,
    total_cost_usd: costOf(totals, pricing),
  };
}

/**
 * What the provider reported, plus llm.pricing's price of every call it did not price. Without
 * llm.pricing the cost is known only when every call reported its own.
 */
export function costOf(totals: UsageTotals, pricing: Pricing | undefined): number | null {
  const unpricedCalls = totals.calls - totals.reported_calls;
  if (!pricing) return unpricedCalls === 0 && totals.reported_calls > 0 ? totals.reported_cost_usd : null;
  const { input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens } = totals.unpriced;
  const cachedPrice = pricing.cached_input_per_million ?? pricing.input_per_million;
  const writePrice = pricing.cache_write_input_per_million ?? pricing.input_per_million;
  const uncached = input_tokens - cached_input_tokens - cache_write_input_tokens;
  const priced = (uncached * pricing.input_per_million + cached_input_tokens * cachedPrice + cache_write_input_tokens * writePrice + output_tokens * pricing.output_per_million) / 1_000_000;
  return totals.reported_cost_usd + priced;
}

/** One call's cost: what its provider reported, or llm.pricing's price of its tokens. */
export function callCost(usage: Usage, pricing: Pricing): number {
  const totals = emptyUsageTotals();
  addUsage(totals, usage);
  return costOf(totals, pricing) ?? 0;
}
