// Token usage and its cost as the RunResult gives them: the journal's totals, each call priced by its provider or its process's llm.pricing.
import { z } from "zod";
import type { RunState } from "../journal/run-state.js";
import type { Pricing } from "../journal/events.js";
import { batchPricing, costOf, type UsageTotals } from "../journal/usage-totals.js";

const UsageFiguresSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  cached_input_tokens: z.number().int().nonnegative(),
  cache_write_input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  reasoning_tokens: z.number().int().nonnegative(),
  /** null when neither llm.pricing nor the provider gives a price: an unknown cost is never reported as 0. */
  total_cost_usd: z.number().nonnegative().nullable(),
});
type UsageFigures = z.infer<typeof UsageFiguresSchema>;

/** A run's usage as its RunResult reports it: the totals, and the same figures per model. */
export const RunUsageSchema = UsageFiguresSchema.extend({
  model_usage: z.record(z.string(), UsageFiguresSchema),
  /** Of the totals, the calls answered through the provider's batch API (llm.batch), priced at the batch rate; absent when none was. */
  batch_usage: UsageFiguresSchema.optional(),
});
export type RunUsage = z.infer<typeof RunUsageSchema>;

export const EMPTY_USAGE: RunUsage = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_tokens: 0, total_cost_usd: null, model_usage: {} };

/** The run's usage as the journal sums it, with its cost when every call's price is known; `pricing`: this process's, for a run with no call yet. */
export function priceRunUsage(usage: Pick<RunState["usage"], "total" | "byModel"> & { batch?: UsageTotals }, pricing: Pricing | undefined): RunUsage {
  return {
    ...figuresOf(usage.total, pricing),
    model_usage: Object.fromEntries([...usage.byModel].map(([model, totals]) => [model, figuresOf(totals, pricing)])),
    ...(usage.batch !== undefined && usage.batch.calls > 0 ? { batch_usage: figuresOf(usage.batch, batchPricing(pricing)) } : {}),
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
