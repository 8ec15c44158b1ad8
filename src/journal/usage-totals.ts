// Sums the usage of a run's model calls and prices it: each call by its provider's own cost, or by the llm.pricing of the process that made it.
import type { EventOf, JournalEvent, Pricing, Usage } from "./events.js";
import type { EventFold } from "./fold.js";

interface TokenCounts {
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
  /** Tokens of the calls that reported no cost, by the llm.pricing (JSON, "" for none) of the process that made them. */
  unpriced: Map<string, UnpricedTokens>;
}

interface UnpricedTokens extends Omit<TokenCounts, "reasoning_tokens"> {
  pricing: Pricing | undefined;
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
    unpriced: new Map(),
  };
}

/** Adds one call made by a process whose llm.pricing is `pricing`. */
export function addUsage(totals: UsageTotals, usage: Usage, pricing: Pricing | undefined): void {
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
  const key = pricing ? JSON.stringify(pricing) : "";
  let unpriced = totals.unpriced.get(key);
  if (!unpriced) totals.unpriced.set(key, (unpriced = { pricing, input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0 }));
  unpriced.input_tokens += usage.input_tokens;
  unpriced.cached_input_tokens += cached;
  unpriced.cache_write_input_tokens += written;
  unpriced.output_tokens += usage.output_tokens;
}

/** The prices an ENGINE_START journaled: one for every model, or (pricing_by_model) one per model name. */
export interface JournaledPrices {
  pricing?: Pricing | undefined;
  pricing_by_model?: Record<string, Pricing> | undefined;
}

/** The price of a THOUGHT's call: at the model that answered it (the model asked, else the one the reply named), when prices are given per model. */
export function thoughtPricing(prices: JournaledPrices, thought: Pick<EventOf<"THOUGHT">, "model" | "answered_by">): Pricing | undefined {
  const byModel = prices.pricing_by_model;
  if (byModel === undefined) return prices.pricing;
  const model = thought.answered_by?.model ?? thought.model;
  return Object.hasOwn(byModel, model) ? byModel[model] : undefined;
}

/** The batch API's default discount (OpenAI Batch and Anthropic Message Batches both charge half the live price). */
const DEFAULT_BATCH_DISCOUNT = 0.5;

/** The price of a call answered through a batch: every rate less the pricing's batch_discount (half when not given). */
export function batchPricing(pricing: Pricing | undefined): Pricing | undefined {
  if (pricing === undefined) return undefined;
  const { batch_discount: discount = DEFAULT_BATCH_DISCOUNT, ...rates } = pricing;
  const scale = (rate: number): number => rate * (1 - discount);
  return {
    input_per_million: scale(rates.input_per_million),
    output_per_million: scale(rates.output_per_million),
    ...(rates.cached_input_per_million !== undefined ? { cached_input_per_million: scale(rates.cached_input_per_million) } : {}),
    ...(rates.cache_write_input_per_million !== undefined ? { cache_write_input_per_million: scale(rates.cache_write_input_per_million) } : {}),
    batch_discount: discount,
  };
}

/** The run's usage as the usage fold gathers it: in all and per model as the THOUGHTs name it. */
export interface RunUsage {
  total: UsageTotals;
  byModel: Map<string, UsageTotals>;
  /** Of the total, the calls answered through a batch, each priced at its batch rate. */
  batch: UsageTotals;
  /** The llm.pricing of the process whose calls follow (the latest ENGINE_START's): its primary model's price. */
  pricing: Pricing | undefined;
  /** That ENGINE_START's prices, per model when it gave them so: each THOUGHT is priced at the model that answered. */
  prices: JournaledPrices;
  /** What budgets counted beyond reported usage (attempts that may have been billed, replies without usage), at their reservations. */
  charged: BudgetCharged;
}

/** Budget charges summed: dollars of those that had a price, tokens of all. */
export interface BudgetCharged {
  usd: number;
  tokens: number;
}

/** Sums each THOUGHT's usage, priced with the llm.pricing of the ENGINE_START before it (the process that made the call). */
export const usageFold: EventFold<RunUsage> = {
  initial: () => ({ total: emptyUsageTotals(), byModel: new Map(), batch: emptyUsageTotals(), pricing: undefined, prices: {}, charged: { usd: 0, tokens: 0 } }),
  step(usage: RunUsage, event: JournalEvent): RunUsage {
    switch (event.type) {
      case "ENGINE_START":
        usage.pricing = event.config.pricing;
        usage.prices = event.config;
        return usage;
      case "THOUGHT": {
        addCharge(usage.charged, event.budget_charge);
        if (!event.usage) return usage;
        const listed = thoughtPricing(usage.prices, event);
        const pricing = event.batch === undefined ? listed : batchPricing(listed);
        addUsage(usage.total, event.usage, pricing);
        if (event.batch !== undefined) addUsage(usage.batch, event.usage, pricing);
        let perModel = usage.byModel.get(event.model);
        if (!perModel) usage.byModel.set(event.model, (perModel = emptyUsageTotals()));
        addUsage(perModel, event.usage, pricing);
        return usage;
      }
      case "LLM_ATTEMPT_FAILED":
        addCharge(usage.charged, event.budget_charge);
        return usage;
      case "USER_MESSAGE":
      case "ACTION_REQUEST":
      case "ACTION_RESULT":
      case "HUMAN_INPUT_REQUEST":
      case "HUMAN_INPUT_RECEIVED":
      case "ERROR":
      case "CONTEXT_WINDOW":
      case "HOOK_RESULT":
      case "REPLAY_DIVERGED":
      case "MODEL_QUEUED":
      case "MODEL_SUBMITTED":
      case "ENGINE_END":
        // No model call's usage.
        return usage;
      default: {
        const unknown: never = event;
        throw new Error(`usage totals: unhandled event ${JSON.stringify(unknown)}`);
      }
    }
  },
};

function addCharge(charged: BudgetCharged, charge: { usd: number | null; tokens: number } | undefined): void {
  if (!charge) return;
  charged.usd += charge.usd ?? 0;
  charged.tokens += charge.tokens;
}

export function copyUsageTotals(totals: UsageTotals): UsageTotals {
  return { ...totals, unpriced: new Map([...totals.unpriced].map(([key, tokens]) => [key, { ...tokens }])) };
}

/**
 * What the providers reported, plus the price each process's llm.pricing puts on the calls it made
 * and the provider did not price; null (never 0) when a call has neither (CONTRACT §5). With no call,
 * 0 when `current` (this process's pricing) is known.
 */
export function costOf(totals: UsageTotals, current: Pricing | undefined): number | null {
  if (totals.calls === 0) return current ? 0 : null;
  let cost = totals.reported_cost_usd;
  for (const tokens of totals.unpriced.values()) {
    if (!tokens.pricing) return null;
    cost += priceOf(tokens, tokens.pricing);
  }
  return cost;
}

/** As costOf, with calls whose process journaled no llm.pricing priced at `fallback` (a budget must count them somehow). */
export function costWithFallback(totals: UsageTotals, fallback: Pricing): number {
  let cost = totals.reported_cost_usd;
  for (const tokens of totals.unpriced.values()) cost += priceOf(tokens, tokens.pricing ?? fallback);
  return cost;
}

/** One call's cost: what its provider reported, or its process's llm.pricing's price of its tokens; null when neither is known. */
export function callCost(usage: Usage, pricing: Pricing | undefined): number | null {
  const totals = emptyUsageTotals();
  addUsage(totals, usage, pricing);
  return costOf(totals, pricing);
}

/** The most `inputTokens` prompt tokens and `outputTokens` reply tokens can cost: every prompt token at the dearest of its prices (a cache write may cost more than plain input). */
export function worstCaseCost(inputTokens: number, outputTokens: number, pricing: Pricing): number {
  const inputPrice = Math.max(pricing.input_per_million, pricing.cached_input_per_million ?? 0, pricing.cache_write_input_per_million ?? 0);
  return (inputTokens * inputPrice + outputTokens * pricing.output_per_million) / 1_000_000;
}

function priceOf(tokens: Omit<TokenCounts, "reasoning_tokens">, pricing: Pricing): number {
  const { input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens } = tokens;
  const cachedPrice = pricing.cached_input_per_million ?? pricing.input_per_million;
  const writePrice = pricing.cache_write_input_per_million ?? pricing.input_per_million;
  const uncached = input_tokens - cached_input_tokens - cache_write_input_tokens;
  return (uncached * pricing.input_per_million + cached_input_tokens * cachedPrice + cache_write_input_tokens * writePrice + output_tokens * pricing.output_per_million) / 1_000_000;
}
