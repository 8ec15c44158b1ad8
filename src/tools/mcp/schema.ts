// The `mcp_servers:` entries of agent.yaml and imported files: a stdio command or a Streamable HTTP url per server.
import { z } from "zod";
import { SandboxPolicySchema } from "../../process/sandbox/policy-schema.js";
import { ToolEffectsSchema } from "../schema.js";

/** How long the engine waits for a server at each step (start, listing its tools, one call) unless `timeout_ms` says otherwise. */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/**
 * 1–32 letters, digits, `_` or `-`, without `__`: the advertised name `<server>__<tool>` then
 * splits at its first `__`, and leaves at least 30 of the 64 characters of a function name for the tool.
 */
const MCP_SERVER_NAME_PATTERN = /^(?!.*__)[A-Za-z0-9_-]{1,32}$/;

/**
 * Built on first use (zod.lazy): an agent without `mcp_servers` never validates one, and building
 * these schemas is about a 1% of a one-turn run's start-up, measured in instructions.
 */
export const McpServerSchema = z.lazy(buildMcpServerSchema);
export type McpServerDefinition = z.infer<typeof McpServerSchema>;
/** `{env: NAME, prefix?}`: a value the engine reads from its environment when the server starts; it is then treated as a secret. */
export type EnvReference = NonNullable<McpServerDefinition["headers"]>[string];

/** A server as the agent declares it, and where: messages name `agent.yaml: mcp_servers[0]`. */
export type McpServerConfig = McpServerDefinition & { where: string };

function buildMcpServerSchema() {
  const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "must be the name of an environment variable (letters, digits and _, not starting with a digit)" });
  const envReferenceShape = {
    env: envName,
    /** Put before the value, e.g. "Bearer ". */
    prefix: z.string().optional(),
  };
  const headerName = z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, { message: "must be an HTTP header name" });
  // A header value never sits in the YAML: a literal is refused with the form to use instead.
  const headerValue = z.strictObject(envReferenceShape, {
    error: (issue) =>
      issue.code === "invalid_type" && typeof issue.input === "string"
        ? 'header values are never written in agent.yaml; read each from an environment variable: {env: NAME, prefix: "Bearer "}'
        : undefined,
  });
  const toolFilter = z.strictObject({
    /** Only these tools of the server are offered to the model. */
    allow: z.array(z.string().min(1)).optional(),
    /** These tools are never offered. */
    deny: z.array(z.string().min(1)).optional(),
  });
  return z
    .strictObject({
      name: z.string().regex(MCP_SERVER_NAME_PATTERN, {
        message: "server names are 1-32 letters, digits, _ or -, without __ (tools are offered as <server>__<tool>)",
      }),
      /** A stdio server: argv, run without a shell. */
      command: z.array(z.string()).min(1).optional(),
      /** For a stdio server: variables added to its environment, a literal or {env: NAME}. */
      env: z.record(envName, z.union([z.string(), z.strictObject(envReferenceShape)])).optional(),
      /** For a stdio server: its working directory (default: the workspace). */
      cwd: z.string().min(1).optional(),
      /** A Streamable HTTP server. */
      url: z.url({ protocol: /^https?$/, message: "must be an http:// or https:// URL" }).optional(),
      /** For a url server: request headers, each read from an environment variable. */
      headers: z.record(headerName, headerValue).optional(),
      tools: toolFilter.optional(),
      /**
       * What running a tool of this server again does, by the server's name for it: `idempotent` lets `continue` run a
       * call a crash left in doubt again, with the same idempotency key. Only the agent's word counts: a server's own
       * `idempotentHint` is not trusted.
       */
      effects: z.record(z.string().min(1), ToolEffectsSchema).optional(),
      timeout_ms: z.number().int().positive().optional(),
      /** For a stdio server: replaces the agent's sandbox for it (`{mode: off}` for a server that needs the network and its own caches, e.g. one run through npx). */
      sandbox: SandboxPolicySchema.optional(),
    })
    .refine((server) => (server.command === undefined) !== (server.url === undefined), {
      message: "an MCP server has exactly one of command (a stdio server) or url (a Streamable HTTP server)",
    })
    .refine((server) => server.url !== undefined || server.headers === undefined, {
      message: "headers are for url servers; a stdio server gets variables through env",
      path: ["headers"],
    })
    .refine((server) => server.command !== undefined || (server.env === undefined && server.cwd === undefined && server.sandbox === undefined), {
      message: "env, cwd and sandbox are for command (stdio) servers; a url server takes headers",
    });
}
