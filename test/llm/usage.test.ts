// The run's cost: llm.pricing for calls the provider did not price, the provider's own figure for those it did, null when unknown.
import { describe, expect, it } from "vitest";
import type { Usage } from "../../src/journal/events.js";
import type { Pricing } from "../../src/journal/events.js";
import { addUsage, costOf, emptyUsageTotals } from "../../src/journal/usage-totals.js";
import { priceRunUsage } from "../../src/llm/usage.js";

/** The totals of calls made by a process whose llm.pricing is `pricing`. */
function totalsOf(pricing: Pricing | undefined, ...calls: Usage[]) {
  const totals = emptyUsageTotals();
  for (const call of calls) addUsage(totals, call, pricing);
  return totals;
}

const pricing = { input_per_million: 2, cached_input_per_million: 0.5, output_per_million: 8 };

describe("costOf", () => {
  it("prices uncached input, cached input and output each at its own price", () => {
    expect(costOf(totalsOf(pricing, { input_tokens: 1000, cached_input_tokens: 600, output_tokens: 100 }), pricing)).toBeCloseTo((400 * 2 + 600 * 0.5 + 100 * 8) / 1e6, 15);
  });

  it("prices cached input at the input price when no cached price is set", () => {
    expect(costOf(totalsOf({ input_per_million: 2, output_per_million: 8 }, { input_tokens: 1000, cached_input_tokens: 600, output_tokens: 0 }), { input_per_million: 2, output_per_million: 8 })).toBeCloseTo(2000 / 1e6, 15);
  });

  it("takes the provider's cost for the calls it priced and llm.pricing for the rest", () => {
    const totals = totalsOf(pricing, { input_tokens: 10, output_tokens: 10, cost_usd: 0.5 }, { input_tokens: 1e6, output_tokens: 0 });
    expect(costOf(totals, pricing)).toBeCloseTo(2.5, 12);
  });

  it("is the provider's sum without llm.pricing only when every call was priced, else null; 0 calls and no pricing is null", () => {
    expect(costOf(totalsOf(undefined, { input_tokens: 1, output_tokens: 1, cost_usd: 0.25 }, { input_tokens: 1, output_tokens: 1, cost_usd: 0.5 }), undefined)).toBe(0.75);
    expect(costOf(totalsOf(undefined, { input_tokens: 1, output_tokens: 1, cost_usd: 0.25 }, { input_tokens: 1, output_tokens: 1 }), undefined)).toBeNull();
    expect(costOf(emptyUsageTotals(), undefined)).toBeNull();
    expect(costOf(emptyUsageTotals(), pricing)).toBe(0);
  });

  it("prices tokens written to the cache at their own price (Anthropic: 1.25× input), the input price when none is set", () => {
    const anthropic = { input_tokens: 1000, cached_input_tokens: 600, cache_write_input_tokens: 300, output_tokens: 100 };
    expect(costOf(totalsOf({ ...pricing, cache_write_input_per_million: 2.5 }, anthropic), { ...pricing, cache_write_input_per_million: 2.5 })).toBeCloseTo((100 * 2 + 600 * 0.5 + 300 * 2.5 + 100 * 8) / 1e6, 15);
    expect(costOf(totalsOf(pricing, anthropic), pricing)).toBeCloseTo((400 * 2 + 600 * 0.5 + 100 * 8) / 1e6, 15);
  });

  it("never counts more cache writes than the uncached part of the prompt", () => {
    const totals = totalsOf({ ...pricing, cache_write_input_per_million: 3 }, { input_tokens: 100, cached_input_tokens: 80, cache_write_input_tokens: 500, output_tokens: 0 });
    expect(totals.cache_write_input_tokens).toBe(20);
    expect(costOf(totals, { ...pricing, cache_write_input_per_million: 3 })).toBeCloseTo((80 * 0.5 + 20 * 3) / 1e6, 15);
  });

  it("prices each call with the llm.pricing of the process that made it, and is null once any call has no price", () => {
    const totals = totalsOf(pricing, { input_tokens: 1000, output_tokens: 100 });
    addUsage(totals, { input_tokens: 1000, output_tokens: 100 }, { input_per_million: 20, output_per_million: 80 });
    expect(costOf(totals, pricing)).toBeCloseTo((1000 * 2 + 100 * 8 + 1000 * 20 + 100 * 80) / 1e6, 15);
    addUsage(totals, { input_tokens: 1, output_tokens: 1 }, undefined);
    expect(costOf(totals, pricing)).toBeNull();
  });

  it("never prices more cached tokens than the prompt had", () => {
    const totals = totalsOf(pricing, { input_tokens: 100, cached_input_tokens: 500, output_tokens: 0 });
    expect(totals.cached_input_tokens).toBe(100);
    expect(costOf(totals, pricing)).toBeCloseTo((100 * 0.5) / 1e6, 15);
  });
});

describe("priceRunUsage", () => {
  it("gives the totals and each model's, with their costs", () => {
    const a = totalsOf(undefined, { input_tokens: 100, cached_input_tokens: 50, output_tokens: 10, reasoning_tokens: 4 });
    const b = totalsOf(undefined, { input_tokens: 10, output_tokens: 1, cost_usd: 0.01 });
    const total = totalsOf(undefined, { input_tokens: 100, cached_input_tokens: 50, output_tokens: 10, reasoning_tokens: 4 }, { input_tokens: 10, output_tokens: 1, cost_usd: 0.01 });
    const usage = priceRunUsage({ total, byModel: new Map([["a", a], ["b", b]]) }, undefined);
    expect(usage).toEqual({
      input_tokens: 110,
      cached_input_tokens: 50,
      cache_write_input_tokens: 0,
      output_tokens: 11,
      reasoning_tokens: 4,
      total_cost_usd: null,
      model_usage: {
        a: { input_tokens: 100, cached_input_tokens: 50, cache_write_input_tokens: 0, output_tokens: 10, reasoning_tokens: 4, total_cost_usd: null },
        b: { input_tokens: 10, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_cost_usd: 0.01 },
      },
    });
  });
});
