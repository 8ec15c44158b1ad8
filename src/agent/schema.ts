// The agent.yaml schema (spec 2.7.2 plus pricing, endpoint and retry settings, MCP servers) and imported tool files.
import { z } from "zod";
import { HooksConfigSchema } from "../hooks/schema.js";
import { LlmConfigSchema } from "../llm/settings-schema.js";
import { McpServerSchema } from "../tools/mcp/schema.js";
import { ToolDefinitionSchema } from "../tools/schema.js";
import { SandboxPolicySchema } from "../process/sandbox/policy-schema.js";


const DEFAULT_SYSTEM_PROMPT = "system_prompt.md";

/** Names of environment variables tools, hooks and generators get even though the engine keeps them to itself (the API key). */
const EnvPassthroughSchema = z.array(
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
