// Token usage and its cost: the RunResult's usage totals, priced from agent.yaml's llm.pricing.
import type { RunState } from "../journal/run-state.js";

export interface Pricing {
  input_per_million: number;
  output_per_million: number;
}

export interface RunUsage {
  input_tokens: number;
  output_tokens: number;
  /** null when agent.yaml gives no llm.pricing: an unknown cost is never reported as 0. */
  total_cost_usd: number | null;
  model_usage: Record<string, { input_tokens: number; output_tokens: number }>;
}

export const EMPTY_USAGE: RunUsage = { input_tokens: 0, output_tokens: 0, total_cost_usd: null, model_usage: {} };

/** The run's usage as the journal sums it, with its cost when a price is known. */
export function priceRunUsage(totals: RunState["usage"], pricing: Pricing | undefined): RunUsage {
  const cost = pricing ? (totals.input_tokens * pricing.input_per_million + totals.output_tokens * pricing.output_per_million) / 1_000_000 : null;
  return {
    input_tokens: totals.input_tokens,
    output_tokens: totals.output_tokens,
    total_cost_usd: cost,
    model_usage: Object.fromEntries(totals.byModel),
  };
}
