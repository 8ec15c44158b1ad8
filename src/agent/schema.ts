// The agent.yaml schema (spec 2.7.2 plus pricing, endpoint and retry settings, MCP servers) and imported tool files.
import { z } from "zod";
import { HooksConfigSchema } from "../hooks/schema.js";
import { PricingSchema } from "../journal/usage-totals.js";
import { PROVIDER_NAMES } from "../llm/types.js";
import { McpServerSchema } from "../tools/mcp/schema.js";
import { ToolDefinitionSchema } from "../tools/schema.js";
import { SandboxPolicySchema } from "../tools/sandbox-schema.js";

export const DEFAULT_LLM_TIMEOUT_MS = 120_000;
export const DEFAULT_LLM_MAX_RETRIES = 3;
export const DEFAULT_LLM_IDLE_TIMEOUT_MS = 120_000;
/** A streamed reply's whole duration: long reasoning streams fit, an endless one does not. */
export const DEFAULT_LLM_MAX_REPLY_MS = 600_000;
export const DEFAULT_LLM_MAX_REPLY_BYTES = 64 << 20;
export const DEFAULT_LLM_MAX_TOOL_CALLS = 128;
export const DEFAULT_LLM_MAX_REPLY_DEPTH = 64;

export const LlmConfigSchema = z.strictObject({
  /** The wire protocol; `openai` (Chat Completions) when not given. DELTA_PROVIDER overrides it. */
  provider: z.enum(PROVIDER_NAMES).optional(),
  model: z.string().min(1),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  /** Tokens the model accepts, prompt and reply; known for common model names (context/model-windows.ts). */
  context_window: z.number().int().positive().optional(),
  top_p: z.number().min(0).max(1).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).optional(),
  seed: z.number().int().optional(),
  /** OpenAI reasoning models (Chat Completions `reasoning_effort`, Responses `reasoning.effort`). */
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).optional(),
  /** Anthropic extended thinking: the thinking blocks, signed, are journaled and sent back unchanged. */
  thinking: z.strictObject({ budget_tokens: z.number().int().min(1024, "thinking.budget_tokens must be at least 1024 (Anthropic's minimum)") }).optional(),
  pricing: PricingSchema.optional(),
  base_url: z.url().optional(),
  timeout_ms: z.number().int().positive().default(DEFAULT_LLM_TIMEOUT_MS),
  max_retries: z.number().int().nonnegative().default(DEFAULT_LLM_MAX_RETRIES),
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

export const DEFAULT_SYSTEM_PROMPT = "system_prompt.md";

/** Names of environment variables tools, hooks and generators get even though the engine keeps them to itself (the API key). */
export const EnvPassthroughSchema = z.array(
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "must be the name of an environment variable (letters, digits and _, not starting with a digit), e.g. DELTA_API_KEY" }),
);

export const AgentConfigSchema = z.strictObject({
  name: z.string().min(1),
  version: z.string({ message: "version must be a string; quote it, e.g. version: \"1.0\"" }).optional(),
  description: z.string().optional(),
  llm: LlmConfigSchema,
  system_prompt: z.string().min(1).default(DEFAULT_SYSTEM_PROMPT),
  imports: z.array(z.string().min(1)).optional(),
  tools: z.array(ToolDefinitionSchema).optional(),
  mcp_servers: z.array(McpServerSchema).optional(),
  env_passthrough: EnvPassthroughSchema.optional(),
  /** The box every tool and MCP stdio server runs in, unless one carries its own; none runs them as the user. */
  sandbox: SandboxPolicySchema.optional(),
  lifecycle_hooks: HooksConfigSchema.optional(),
  /** The JSON Schema the final answer must meet (draft 2020-12, or draft-07 by $schema): inline, or a file inside the agent directory. */
  output_schema: z
    .union([z.string().min(1), z.record(z.string(), z.unknown())], {
      message: "output_schema is a JSON Schema written as a mapping, or the path of a schema file inside the agent directory",
    })
    .optional(),
  /** What io/ keeps: `requests: parts` (default) stores each distinct message and tool list once; `full` writes every request whole. */
  io: z.strictObject({ requests: z.enum(["parts", "full"]).default("parts") }).optional(),
});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/** A file named in `imports:`: a `tools` list, MCP servers, possibly the variables they need passed on, and its own imports. */
export const ImportFileSchema = z
  .strictObject({
    imports: z.array(z.string().min(1)).optional(),
    tools: z.array(ToolDefinitionSchema).optional(),
    mcp_servers: z.array(McpServerSchema).optional(),
    env_passthrough: EnvPassthroughSchema.optional(),
  })
  .refine((file) => file.tools !== undefined || file.mcp_servers !== undefined, {
    message: "an imported file defines a tools: list or an mcp_servers: list (or both); add one",
    path: ["tools"],
  });
export type ImportFile = z.infer<typeof ImportFileSchema>;
