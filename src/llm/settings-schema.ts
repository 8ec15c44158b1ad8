// agent.yaml's `llm:` block: the sampling parameters a request carries, and the settings only the engine reads (endpoint, timeouts, retries, reply bounds, pricing).
import { z } from "zod";
import { BatchApiSchema, PricingSchema, type Pricing } from "../journal/events.js";
import { DEFAULT_MAX_RETRY_WAIT_MS } from "./transport/backoff.js";
import { PROVIDER_NAMES } from "./types.js";

const DEFAULT_LLM_MAX_RETRIES = 3;
const DEFAULT_LLM_IDLE_TIMEOUT_MS = 120_000;
/** A streamed reply's whole duration: long reasoning streams fit, an endless one does not. */
const DEFAULT_LLM_MAX_REPLY_MS = 600_000;
const DEFAULT_LLM_MAX_REPLY_BYTES = 64 << 20;
const DEFAULT_LLM_MAX_TOOL_CALLS = 128;
const DEFAULT_LLM_MAX_REPLY_DEPTH = 64;

/** What the model is asked to do with its reply: every field here, and only these, goes into a request's `params`. */
const SamplingSchema = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  top_p: z.number().min(0).max(1).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).optional(),
  seed: z.number().int().optional(),
  /** OpenAI reasoning models (Chat Completions `reasoning_effort`, Responses `reasoning.effort`). */
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).optional(),
  /** Anthropic extended thinking: the thinking blocks, signed, are journaled and sent back unchanged. */
  thinking: z.strictObject({ budget_tokens: z.number().int().min(1024, "thinking.budget_tokens must be at least 1024 (Anthropic's minimum)") }).optional(),
});

/** An environment variable's name, as key_env gives one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * One entry of llm.fallback: a model name (asked of the primary's endpoint with its key), or another endpoint's model
 * with the variable its key is read from (the environment or a .env) and its base URL (the protocol's public one when not given).
 */
const FallbackSchema = z.union([
  z.string().min(1),
  z.strictObject({
    provider: z.enum(PROVIDER_NAMES),
    model: z.string().min(1),
    key_env: z.string().regex(ENV_NAME, "key_env names the environment variable holding this endpoint's API key, e.g. OPENAI_API_KEY"),
    base_url: z.url().optional(),
  }),
], {
  error: `write a model name (asked of the primary's endpoint), or { provider: ${PROVIDER_NAMES.join(" | ")}, model: <name>, key_env: <the variable holding its API key>, base_url: <optional URL> }`,
});

/**
 * llm.pricing: one price for every model the run asks, or a price per model name (the primary's and each fallback's).
 * A map is told from a price by its keys: a price has input_per_million.
 */
const LlmPricingSchema = z.union([PricingSchema, z.record(z.string().min(1), PricingSchema)], {
  error: "write one price ({ input_per_million, output_per_million, cached_input_per_million?, cache_write_input_per_million? }) or a map from each model's name to its price",
});

/** The `llm:` block as agent.yaml writes it: the sampling fields side by side with the engine's own settings. */
export const LlmConfigSchema = z.strictObject({
  /** The wire protocol; `openai` (Chat Completions) when not given. DELTA_PROVIDER overrides it. */
  provider: z.enum(PROVIDER_NAMES).optional(),
  model: z.string().min(1),
  ...SamplingSchema.shape,
  /** Tokens the model accepts, prompt and reply; known for common model names (context/model-windows.ts). */
  context_window: z.number().int().positive().optional(),
  pricing: LlmPricingSchema.optional(),
  /** Models tried in order when the one before stays overloaded after its retries (503, 529) or is retired (404, model not found); a rate limit or a quota defers the run instead. */
  fallback: z.array(FallbackSchema).max(8).optional(),
  /** What one run may spend over all its invocations (`--max-cost-usd` and `continue --max-cost-usd` set the dollars for a run); past it the run ends DEFERRED BUDGET_EXHAUSTED. */
  budget: z
    .strictObject({
      /** Needs llm.pricing: each call's worst case is priced before it is sent. */
      max_cost_usd: z.number().positive().optional(),
      /** Prompt and reply tokens together, over every call of the run. */
      max_tokens: z.number().int().positive().optional(),
    })
    .optional(),
  base_url: z.url().optional(),
  /**
   * Send the run's model calls through the provider's batch API at its discount (`--batch` for one invocation): `true`
   * for OpenAI's and Anthropic's own endpoints; `openai` or `anthropic` says which batch API another endpoint (a gateway)
   * speaks. An endpoint with no batch API is refused.
   */
  batch: z.union([z.boolean(), BatchApiSchema]).optional(),
  /**
   * Each attempt's whole duration, from the request to the reply's last byte. Unset: 120000 for a whole reply, and a
   * streamed reply is bounded by idle_timeout_ms and max_reply_ms; set, it bounds a streamed attempt end to end too.
   */
  timeout_ms: z.number().int().positive().optional(),
  max_retries: z.number().int().nonnegative().default(DEFAULT_LLM_MAX_RETRIES),
  /** The longest wait between attempts a run sleeps through; a rate limit asking for more ends the run DEFERRED (exit 75) until it resets. */
  max_retry_wait_ms: z.number().int().nonnegative().default(DEFAULT_MAX_RETRY_WAIT_MS),
  /** Read the reply as a stream of server-sent events; the call then ends only when no byte came for idle_timeout_ms. */
  stream: z.boolean().default(false),
  idle_timeout_ms: z.number().int().positive().default(DEFAULT_LLM_IDLE_TIMEOUT_MS),
  /** A streamed reply's total time, however steadily bytes arrive. */
  max_reply_ms: z.number().int().positive().default(DEFAULT_LLM_MAX_REPLY_MS),
  /** A reply's size as received (decoded), whole or streamed. */
  max_reply_bytes: z.number().int().positive().default(DEFAULT_LLM_MAX_REPLY_BYTES),
  /** Tool calls one reply may ask for; past it the reply is an error and no tool runs. */
  max_tool_calls: z.number().int().positive().default(DEFAULT_LLM_MAX_TOOL_CALLS),
  /** How deeply a reply's JSON may nest (objects and arrays). */
  max_reply_depth: z.number().int().positive().default(DEFAULT_LLM_MAX_REPLY_DEPTH),
});
export type LlmConfig = z.infer<typeof LlmConfigSchema>;

/** llm.pricing as ENGINE_START journals it: `pricing` the primary's price (or the one price), `pricing_by_model` each model's when given per model. */
export function journaledPricing(llm: Pick<LlmConfig, "pricing" | "model">): { pricing?: Pricing; pricing_by_model?: Record<string, Pricing> } {
  const { pricing } = llm;
  if (pricing === undefined) return {};
  if (isOnePrice(pricing)) return { pricing };
  const primary = pricingOf(pricing, llm.model);
  return { ...(primary ? { pricing: primary } : {}), pricing_by_model: pricing };
}

/** The models a run may ask: the primary, then each of llm.fallback in order. */
export function chainModels(llm: Pick<LlmConfig, "model" | "fallback">): string[] {
  return [llm.model, ...(llm.fallback ?? []).map((entry) => (typeof entry === "string" ? entry : entry.model))];
}

/** The price llm.pricing gives `model`: the one price, or that model's in a map; undefined when it names none. */
export function pricingOf(pricing: LlmConfig["pricing"], model: string): Pricing | undefined {
  if (pricing === undefined) return undefined;
  if (isOnePrice(pricing)) return pricing;
  return Object.hasOwn(pricing, model) ? pricing[model] : undefined;
}

function isOnePrice(pricing: NonNullable<LlmConfig["pricing"]>): pricing is Pricing {
  return typeof (pricing as Partial<Pricing>).input_per_million === "number";
}

const SAMPLING_FIELDS = Object.keys(SamplingSchema.shape) as (keyof z.infer<typeof SamplingSchema>)[];

/** The request's `params`: the sampling fields agent.yaml set, nothing the engine keeps to itself. */
export function samplingParams(llm: LlmConfig): Record<string, unknown> {
  return Object.fromEntries(SAMPLING_FIELDS.filter((field) => llm[field] !== undefined).map((field) => [field, llm[field]]));
}
