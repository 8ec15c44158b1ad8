// The journal's vocabulary: one zod schema per event type, the only definition of an event.
import { z } from "zod";

export const RunStatusSchema = z.enum(["RUNNING", "WAITING_FOR_INPUT", "COMPLETED", "FAILED", "INTERRUPTED", "DEFERRED"]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const ToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The model's arguments exactly as sent: a JSON string that may be invalid. */
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/**
 * Tokens of one model call. `input_tokens` counts the whole prompt, cached tokens included;
 * `output_tokens` the whole reply, reasoning included. The optional fields were added later, so
 * older journals still read.
 */
export const UsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  /** Of input_tokens, those the provider served from its prompt cache. */
  cached_input_tokens: z.number().int().nonnegative().optional(),
  /** Of input_tokens, those the provider wrote to its prompt cache (Anthropic's cache_creation_input_tokens), priced apart. */
  cache_write_input_tokens: z.number().int().nonnegative().optional(),
  /** Of output_tokens, those spent on reasoning the reply does not show. */
  reasoning_tokens: z.number().int().nonnegative().optional(),
  /** What the provider itself says the call cost, in USD (OpenRouter's usage.cost). */
  cost_usd: z.number().nonnegative().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/**
 * What a provider returned beside text and tool calls and needs back on the next request, opaque
 * to everything but the wire protocol named in `protocol`, which alone reads and sends it.
 */
export const ProviderDataSchema = z.looseObject({ protocol: z.string().min(1) });
export type ProviderData = z.infer<typeof ProviderDataSchema>;

const base = {
  seq: z.number().int().positive(),
  timestamp: z.string(),
  /**
   * The line's place in the journal's hash chain (journal/chain.ts): `sha256:<hex>`, written as the line's last member.
   * Journals written before the chain lack it.
   */
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/).optional(),
};

/**
 * What a budget counted for one model attempt beyond the usage its provider reported: its reservation in full, when
 * the attempt may have been billed and no usage says for how much (a reply without usage, a timeout, a cut stream).
 */
const BudgetChargeSchema = z.object({
  /** null when no price was known (a token budget only). */
  usd: z.number().nonnegative().nullable(),
  tokens: z.number().int().nonnegative(),
});

/** agent.yaml's llm.pricing, as each process journals it in its ENGINE_START. */
export const PricingSchema = z.strictObject({
  /** USD per million input tokens. */
  input_per_million: z.number().nonnegative(),
  /** USD per million output tokens. */
  output_per_million: z.number().nonnegative(),
  /** USD per million prompt tokens served from the provider's cache; input_per_million when not given. */
  cached_input_per_million: z.number().nonnegative().optional(),
  /** USD per million prompt tokens written to the provider's cache (Anthropic: 1.25× input for 5 minutes); input_per_million when not given. */
  cache_write_input_per_million: z.number().nonnegative().optional(),
  /** The share taken off every price for a call answered through the provider's batch API; 0.5 (half price) when not given. */
  batch_discount: z.number().min(0).max(1).optional(),
});
export type Pricing = z.infer<typeof PricingSchema>;

/** The endpoint and model that answered a call (or that a fallback asks): the protocol, the base URL without credentials, the model as asked. */
const AnsweredBySchema = z.object({ provider: z.string(), base_url: z.string(), model: z.string() });
export type AnsweredBy = z.infer<typeof AnsweredBySchema>;

/** What a run may spend, over all its invocations (llm.budget, --max-cost-usd), and the ledger its calls are reserved in (--budget-file). */
const RunBudgetSchema = z.object({
  max_cost_usd: z.number().positive().nullable(),
  max_tokens: z.number().int().positive().nullable(),
  /** The ledger's absolute path, or null. */
  ledger: z.string().nullable(),
});
export type RunBudget = z.infer<typeof RunBudgetSchema>;

/** A config field as read: absent, or of a type this engine does not read there (an older engine's journal, one edited by hand), it reads as absent. */
const readAs = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

/**
 * What an ENGINE_START records of its invocation (run/engine-start.ts writes it, in this order): each field typed once,
 * here, for every reader; the two whose shape another room owns (the boxes, the output schema) are read by that room's
 * schema. Fields a later engine adds are kept.
 */
function engineStartConfigSchema() {
  return z.looseObject({
    agent_name: readAs(z.string()),
    model: readAs(z.string()),
    max_iterations: readAs(z.number().int().positive()),
    tools: readAs(z.array(z.string())),
    mcp_servers: readAs(z.array(z.string())),
    interactive: readAs(z.boolean()),
    /** "none", or the boxes of tools, servers and hooks: process/sandbox/policy-schema.ts reads them (RunSandboxSchema), as the room that owns them. */
    sandbox: z.unknown().optional(),
    pid: readAs(z.number().int()),
    /** The host this invocation ran on: its spans' host.name. */
    hostname: readAs(z.string()),
    /** So that show and report price each call as the run's RunResult does. */
    pricing: readAs(PricingSchema),
    /** With llm.pricing given per model: each model's price (pricing is then the primary's); a THOUGHT is priced at the model that answered it. */
    pricing_by_model: readAs(z.record(z.string(), PricingSchema)),
    /** The schema the run's final answer must meet, read by agent/output-schema.ts's OutputSchemaSchema: `continue` holds the run to it, and refuses one it cannot read. */
    output_schema: z.unknown().optional(),
    /** The provider as the invocation named it (`openai-compatible`, `anthropic`, `openai-responses`, `replay`). */
    provider: readAs(z.string()),
    base_url: readAs(z.string()),
    /** With provider `replay`: the recording replayed. */
    replay: readAs(z.string()),
    /** With `replay`: how each request was checked against the recording's (`until-divergence`, `strict`). */
    replay_check: readAs(z.string()),
    api_key_source: readAs(z.string()),
    base_url_source: readAs(z.string()),
    /** The endpoint a `continue` must keep (run/run-endpoint.ts): the protocol and the base URL without credentials. */
    endpoint: readAs(z.object({ provider: z.string(), base_url: z.string() })),
    /** The run's budget as this invocation held it, which a later `continue` keeps unless it is given another: its limits, and the fleet's ledger. */
    budget: readAs(RunBudgetSchema),
    /** The batch API the run's model calls go through (llm.batch, --batch): continue keeps batching. */
    batch: readAs(BatchApiSchema),
    /** llm.fallback as this invocation resolved it, in order: pinned like the endpoint, so `continue` refuses a fallback that points elsewhere. */
    fallback: readAs(z.array(AnsweredBySchema)),
  });
}
export type EngineStartConfig = z.infer<ReturnType<typeof engineStartConfigSchema>>;

/**
 * Built when the first ENGINE_START is parsed, not as the bundle loads: with these schemas built at load, the young
 * generation a run holds at its first size (cli/runtime-flags.ts, test/e2e/young-generation.test.ts) doubled.
 */
let engineStartConfig: ReturnType<typeof engineStartConfigSchema> | undefined;

const EngineStartEventSchema = z.object({
  ...base,
  type: z.literal("ENGINE_START"),
  run_id: z.string(),
  agent_home: z.string(),
  work_dir: z.string(),
  config: z.lazy(() => (engineStartConfig ??= engineStartConfigSchema())),
  engine_version: z.string(),
  /**
   * The run's OpenTelemetry trace, journaled by its first ENGINE_START: the caller's trace id from
   * TRACEPARENT, else a random one (32 hex digits). Journals written before it lack it: their trace
   * id is derived from the run (trace/trace-ids.ts).
   */
  trace_id: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  /** With trace_id: the caller's span (TRACEPARENT) the run's spans hang under. */
  parent_span_id: z.string().regex(/^[0-9a-f]{16}$/).optional(),
  /** With parent_span_id: the caller's sampled flag, so every invocation of the run makes the same sampling decision. */
  parent_sampled: z.boolean().optional(),
  /** On a later ENGINE_START: the span a TRACEPARENT given to `continue` named, which that invocation's span links to. */
  link_trace_id: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  link_span_id: z.string().regex(/^[0-9a-f]{16}$/).optional(),
  /**
   * A fork's first ENGINE_START (`delta fork`): the run it was made from, the last iteration it kept, and the seq and
   * hash of the last event it copied in that run's journal (hash null when that journal is unchained).
   */
  forked_from: z.object({ run_id: z.string(), iteration: z.number().int().positive(), seq: z.number().int().positive(), hash: z.string().nullable() }).optional(),
});

const UserMessageEventSchema = z.object({
  ...base,
  type: z.literal("USER_MESSAGE"),
  content: z.string(),
  /** Set when the engine itself wrote the message (a re-ask after a final answer that did not meet the output schema); absent for the user's. */
  source: z.literal("engine").optional(),
});

const ThoughtEventSchema = z.object({
  ...base,
  type: z.literal("THOUGHT"),
  iteration: z.number().int().positive(),
  content: z.string().nullable(),
  tool_calls: z.array(ToolCallSchema),
  usage: UsageSchema.nullable(),
  model: z.string(),
  /** The provider's reason for stopping, as it said it (`stop`, `tool_calls`, `length`, `content_filter`…). */
  finish_reason: z.string().optional(),
  /** The model's reasoning text, when the provider shows it: for people (journal, -v), never stdout. */
  reasoning: z.string().optional(),
  provider_data: ProviderDataSchema.optional(),
  /**
   * The engine's own count of this request's prompt (the run's tokenizer or estimate, before
   * calibration), when a token budget made it count; with usage.input_tokens it calibrates the next count.
   */
  estimated_input_tokens: z.number().int().nonnegative().optional(),
  /**
   * How estimated_input_tokens was counted: `bytes` (three bytes a token, no tokenizer loaded) or the
   * counter's name (`o200k_base`, `cl100k_base`, `estimate`); journals before this field counted with the counter.
   */
  estimated_by: z.string().optional(),
  /**
   * The model call that answered: when its first attempt was sent, how long it took until the reply
   * was read (failed attempts and the waits between them included), and how many attempts it made.
   * Journals written before these fields existed lack them.
   */
  started_at: z.string().optional(),
  duration_ms: z.number().nonnegative().optional(),
  attempts: z.number().int().positive().optional(),
  /** A budget counted this reply at its reservation: the provider reported no usage for it. */
  budget_charge: BudgetChargeSchema.optional(),
  /** The endpoint and the model asked that answered: the primary, or a fallback (llm.fallback). Journals before fallbacks lack it. */
  answered_by: AnsweredBySchema.optional(),
  /**
   * Earlier replies whose provider-own reasoning state (Anthropic's signed or redacted thinking, OpenAI's encrypted
   * reasoning) was left out of this request because another endpoint made them: a fallback's note, never sent across.
   */
  reasoning_dropped: z.number().int().positive().optional(),
  /** The call was answered through the provider's batch API (llm.batch): the batch and the call's custom id; priced at the batch rate. */
  batch: z.object({ batch_id: z.string(), custom_id: z.string() }).optional(),
});

/** Longest text an LLM_ATTEMPT_FAILED keeps of a reason or of the server's words. */
export const ATTEMPT_TEXT_LIMIT = 500;

/**
 * One attempt of a model call that failed: a status, a network error, a timeout or a reply that
 * could not be used. Appended as it happens, before the wait, so a run that fails or dies while
 * retrying still shows every attempt. The attempt that answers is the THOUGHT after it.
 */
const LlmAttemptFailedEventSchema = z.object({
  ...base,
  type: z.literal("LLM_ATTEMPT_FAILED"),
  iteration: z.number().int().positive(),
  /** 1 for the call's first request, 2 for its first retry… */
  attempt: z.number().int().positive(),
  started_at: z.string(),
  duration_ms: z.number().nonnegative(),
  /** What went wrong, secrets removed, at most ATTEMPT_TEXT_LIMIT characters: `HTTP 500`, the network error, `no answer within 600000 ms`… */
  reason: z.string().max(ATTEMPT_TEXT_LIMIT + 1),
  /** The HTTP status, or the status an error body carried; absent for a network error or a timeout. */
  http_status: z.number().int().optional(),
  /** The server's own words, secrets removed, at most ATTEMPT_TEXT_LIMIT characters. */
  server_message: z.string().max(ATTEMPT_TEXT_LIMIT + 1).optional(),
  /** The server's error code, when it gave one (`rate_limit_exceeded`, `overloaded_error`…). */
  server_code: z.string().max(ATTEMPT_TEXT_LIMIT + 1).optional(),
  /** The wait before the next attempt; null when none followed (the call failed, or the request was rebuilt). */
  retry_in_ms: z.number().int().nonnegative().nullable(),
  /** A budget counted this attempt at its reservation: it may have been billed (it reached the server) with no usage to say for how much. */
  budget_charge: BudgetChargeSchema.optional(),
  /** The model the attempt asked (a fallback's, once the primary gave up); journals before fallbacks lack it. */
  model: z.string().optional(),
});

const ActionRequestEventSchema = z.object({
  ...base,
  type: z.literal("ACTION_REQUEST"),
  iteration: z.number().int().positive(),
  action_id: z.string(),
  tool_name: z.string(),
  tool_args: z.unknown(),
  /** The argv that will run, or null when the call could not be bound to a command. */
  resolved_command: z.array(z.string()).nullable(),
  /**
   * Set when `continue` runs the call again: the seq of the earlier ACTION_REQUEST of this call, whose result no
   * engine recorded (it stopped). Only a tool declared `effects: idempotent` is run again, with the same idempotency key.
   */
  rerun_of: z.number().int().positive().optional(),
});

const ActionStatusSchema = z.enum(["SUCCESS", "FAILED", "ERROR"]);
export type ActionStatus = z.infer<typeof ActionStatusSchema>;

const ActionResultEventSchema = z.object({
  ...base,
  type: z.literal("ACTION_RESULT"),
  iteration: z.number().int().positive(),
  action_id: z.string(),
  tool_name: z.string(),
  status: ActionStatusSchema,
  observation_content: z.string(),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number().nonnegative(),
  /** Lines of the tool's whole output, when the observation holds only part of it (the whole is in io/tool_executions/). */
  output_lines: z.number().int().nonnegative().optional(),
});

const HumanInputRequestEventSchema = z.object({
  ...base,
  type: z.literal("HUMAN_INPUT_REQUEST"),
  iteration: z.number().int().positive(),
  action_id: z.string(),
  request_id: z.string(),
  prompt: z.string(),
  input_type: z.string(),
  sensitive: z.boolean(),
});

const HumanInputReceivedEventSchema = z.object({
  ...base,
  type: z.literal("HUMAN_INPUT_RECEIVED"),
  iteration: z.number().int().positive(),
  action_id: z.string(),
  request_id: z.string(),
  response: z.string(),
});

const ErrorEventSchema = z.object({
  ...base,
  type: z.literal("ERROR"),
  error_type: z.string(),
  error_message: z.string(),
  error_details: z.unknown().optional(),
});

const WindowReasonSchema = z.enum(["max_iterations", "max_tokens", "context_window", "overflow"]);
export type WindowReason = z.infer<typeof WindowReasonSchema>;

/**
 * The conversation window moved forward before the request of `iteration`: iterations
 * `dropped_from`–`dropped_to` are no longer shown, the context shows iterations from
 * `first_iteration` on. Later context builds start from the last of these events, so a resumed or
 * replayed run sees what the model saw (context/window-rule.ts).
 */
const ContextWindowEventSchema = z.object({
  ...base,
  type: z.literal("CONTEXT_WINDOW"),
  iteration: z.number().int().positive(),
  reason: WindowReasonSchema,
  first_iteration: z.number().int().positive(),
  dropped_from: z.number().int().positive(),
  dropped_to: z.number().int().positive(),
  /** The limit that was passed: iterations for max_iterations, tokens otherwise. */
  limit: z.number().int().nonnegative(),
  /** The journal's share of the context in tokens (calibrated) before and after the move, when counted. */
  tokens_before: z.number().int().nonnegative().optional(),
  tokens_after: z.number().int().nonnegative().optional(),
  /** Set when the server refused the request as too long: what it said and what the run now keeps to. */
  overflow: z
    .object({
      /** The window in tokens later requests keep within (with room for the reply). */
      window_tokens: z.number().int().positive(),
      /** The engine's count of the refused request, before calibration. */
      sent_estimate: z.number().int().nonnegative(),
      server_limit_tokens: z.number().int().nonnegative().optional(),
      server_requested_tokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
});

/**
 * A lifecycle hook ran (any but on_run_end, which runs after ENGINE_END): its outcome, never its
 * input or output, which stay in the `io/hooks/` record it names. Not conversation: no reader of
 * the context or of the run's state uses it.
 */
const HookResultEventSchema = z.object({
  ...base,
  type: z.literal("HOOK_RESULT"),
  hook: z.string(),
  iteration: z.number().int().nonnegative(),
  /** continue; block (it refused, or a pre_* hook failed closed); failed_open (a post_* / on_* hook failed and the run went on). */
  outcome: z.enum(["continue", "block", "failed_open"]),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  started_at: z.string(),
  duration_ms: z.number().nonnegative(),
  /** The record of this execution, relative to the run directory (`io/hooks/<hook>_<time>.json`). */
  record: z.string(),
});

/**
 * What a DEFERRED run waits for (errors.ts's DEFERRAL_REASONS names the reasons; one a later engine adds still reads):
 * when it may go on (ISO-8601 UTC, null when unknown) and why, in words.
 */
export const DeferredSchema = z.object({
  reason: z.string().min(1),
  resume_after: z.string().nullable(),
  message: z.string(),
});
export type Deferred = z.infer<typeof DeferredSchema>;

/** A batched call's id within its batch: what the provider's result names it by (Anthropic's rule, which OpenAI accepts too). */
export const CUSTOM_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The batch APIs the engine speaks: OpenAI Batch (Chat Completions and Responses) and Anthropic Message Batches. */
export const BatchApiSchema = z.enum(["openai", "anthropic"]);
export type BatchApi = z.infer<typeof BatchApiSchema>;

/**
 * A model call queued for the provider's batch API (llm.batch, --batch) instead of being sent: the request, built and
 * passed by pre_llm_request, is in its io record; the run then ends DEFERRED MODEL_BATCHED. The THOUGHT that answers it
 * (collected once its batch has ended) carries the same custom id.
 */
const ModelQueuedEventSchema = z.object({
  ...base,
  type: z.literal("MODEL_QUEUED"),
  iteration: z.number().int().positive(),
  custom_id: z.string().regex(CUSTOM_ID_PATTERN),
  /** The request as it will be sent, relative to the run directory (`io/batch/<custom_id>.json`). */
  request_record: z.string(),
  batch_api: BatchApiSchema,
  /** The endpoint the call goes to: the protocol and the base URL without credentials. */
  provider: z.string(),
  base_url: z.string(),
  model: z.string(),
});

/**
 * `delta batch submit` sent (or is about to send) the queued call in a batch: journaled with `batch_id: null` under the
 * run's lease before anything is sent, then again with the provider's batch id once it answered. A submission whose
 * batch id never came is found again by its id (OpenAI: the batch's metadata) or is in doubt (Anthropic). `failed`: the
 * provider refused the submission and created nothing; the call is queued again.
 */
const ModelSubmittedEventSchema = z.object({
  ...base,
  type: z.literal("MODEL_SUBMITTED"),
  iteration: z.number().int().positive(),
  custom_id: z.string().regex(CUSTOM_ID_PATTERN),
  submission_id: z.string().regex(CUSTOM_ID_PATTERN),
  batch_id: z.string().nullable(),
  /** How many calls the submission's batch holds. */
  requests: z.number().int().positive(),
  failed: z.string().optional(),
});

/**
 * `--replay <run folder> --until-divergence` or `--replay-strict`: the request of this iteration is not the one the
 * recording sent at that call (equal once run ids, paths, call ids and times are normalized), journaled before the
 * call goes anywhere. Then the run goes live (`live`: the model is asked from here on) or stops FAILED with
 * REPLAY_DIVERGED (`stopped`). Not conversation: no context or run state reads it.
 */
const ReplayDivergedEventSchema = z.object({
  ...base,
  type: z.literal("REPLAY_DIVERGED"),
  iteration: z.number().int().positive(),
  /** The recording's model call (from 1) this request was compared with. */
  recorded_call: z.number().int().positive(),
  /** The recording, as --replay named it. */
  source: z.string(),
  /** Each part of the request that differs (model, parameters, system prompt, tools, messages) and what changed in it; none when the recording has no such call. */
  parts: z.array(z.object({ part: z.string(), summary: z.string() })),
  then: z.enum(["live", "stopped"]),
});

const EngineEndEventSchema = z.object({
  ...base,
  type: z.literal("ENGINE_END"),
  run_id: z.string(),
  status: RunStatusSchema,
  final_iteration: z.number().int().nonnegative(),
  /** With status DEFERRED. */
  deferred: DeferredSchema.optional(),
});

export const JournalEventSchema = z.discriminatedUnion("type", [
  EngineStartEventSchema,
  UserMessageEventSchema,
  ThoughtEventSchema,
  LlmAttemptFailedEventSchema,
  ActionRequestEventSchema,
  ActionResultEventSchema,
  HumanInputRequestEventSchema,
  HumanInputReceivedEventSchema,
  ErrorEventSchema,
  ContextWindowEventSchema,
  HookResultEventSchema,
  ReplayDivergedEventSchema,
  ModelQueuedEventSchema,
  ModelSubmittedEventSchema,
  EngineEndEventSchema,
]);

export type JournalEvent = z.infer<typeof JournalEventSchema>;
type EventType = JournalEvent["type"];
export type EventOf<T extends EventType> = Extract<JournalEvent, { type: T }>;
/** What a writer supplies: the journal assigns seq, timestamp and hash. */
export type NewEvent = JournalEvent extends infer E ? (E extends JournalEvent ? Omit<E, "seq" | "timestamp" | "hash"> : never) : never;
