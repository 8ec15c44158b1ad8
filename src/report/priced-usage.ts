// A call's usage as a report shows it: the provider's own cost, or the price llm.pricing puts on its tokens.
import { PricingSchema } from "../agent/schema.js";
import type { EventOf } from "../journal/events.js";
import { callCost, type Pricing } from "../llm/usage.js";
import { usageNumbers, type UsageTotals } from "./usage-fields.js";

/** The llm.pricing a process recorded in its ENGINE_START, if it recorded a valid one. */
export function pricingIn(start: EventOf<"ENGINE_START"> | undefined): Pricing | undefined {
  const pricing = PricingSchema.safeParse(start?.config.pricing);
  return pricing.success ? pricing.data : undefined;
}

export function shownUsage(thought: EventOf<"THOUGHT">, pricing: Pricing | undefined): UsageTotals {
  const usage = usageNumbers(thought.usage);
  if (usage.cost_usd === undefined && thought.usage && pricing) usage.cost_usd = callCost(thought.usage, pricing);
  return usage;
}
