// A call's usage as a report shows it: the provider's own cost, or the price its process's llm.pricing puts on its tokens at the model that answered.
import type { EventOf } from "../journal/events.js";
import { batchPricing, callCost, thoughtPricing, type JournaledPrices } from "../journal/usage-totals.js";
import { usageNumbers, type UsageTotals } from "./usage-fields.js";

export function shownUsage(thought: EventOf<"THOUGHT">, prices: JournaledPrices): UsageTotals {
  const usage = usageNumbers(thought.usage);
  if (usage.cost_usd !== undefined || !thought.usage) return usage;
  const listed = thoughtPricing(prices, thought);
  const cost = callCost(thought.usage, thought.batch === undefined ? listed : batchPricing(listed));
  if (cost !== null) usage.cost_usd = cost;
  return usage;
}
