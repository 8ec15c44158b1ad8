// agent.yaml's `llm:` block: the sampling parameters a request carries, and the settings only the engine reads (endpoint, timeouts, retries, reply bounds, pricing).
import { z } from "zod";
import { PricingSchema } from "../journal/events.js";
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

/** The `llm:` block as agent.yaml writes it: the sampling fields side by side with the engine's own settings. */
export const LlmConfigSchema = z.strictObject({
  /** The wire protocol; `openai` (Chat Completions) when not given. DELTA_PROVIDER overrides it. */
  provider: z.enum(PROVIDER_NAMES).optional(),
  model: z.string().min(1),
  ...SamplingSchema.shape,
  /** Tokens the model accepts, prompt and reply; known for common model names (context/model-windows.ts). */
  context_window: z.number().int().positive().optional(),
  pricing: PricingSchema.optional(),
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

const SAMPLING_FIELDS = Object.keys(SamplingSchema.shape) as (keyof z.infer<typeof SamplingSchema>)[];

/** The request's `params`: the sampling fields agent.yaml set, nothing the engine keeps to itself. */
export function samplingParams(llm: LlmConfig): Record<string, unknown> {
  return Object.fromEntries(SAMPLING_FIELDS.filter((field) => llm[field] !== undefined).map((field) => [field, llm[field]]));
}
