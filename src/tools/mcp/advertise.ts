// Which tools of each MCP server the model is offered, under which names (`<server>__<tool>`), and with which schema; pure.
import type { FunctionTool } from "../../conversation.js";
import { McpServerError } from "../../errors.js";
import { TOOL_NAME_PATTERN, type ToolEffects } from "../schema.js";
import type { McpServerConfig } from "./schema.js";

/** A tool as the server lists it (tools/list), as far as the engine reads it. */
export interface ListedTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  execution?: { taskSupport?: string | undefined } | undefined;
}

/** A tool of an MCP server as the model is offered it. */
export interface McpTool {
  /** `<server>__<tool>`. */
  name: string;
  server: string;
  /** The server's own name for it. */
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** As the agent's `effects:` for the server declares it (never as the server describes itself). */
  effects?: ToolEffects;
}

const MCP_NAME_SEPARATOR = "__";

/** `fs__read_file`. */
function advertisedName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool}`;
}

/**
 * The server's tools after its allow and deny lists. An allowed tool the server does not have is
 * refused (a typo would otherwise hide a tool); a denied one it lacks is only a warning. Tools the
 * engine cannot call (task-only execution) are left out with a warning.
 */
export function selectTools(server: McpServerConfig, listed: ListedTool[], warn: (line: string) => void): McpTool[] {
  const where = `MCP server '${server.name}' (${server.where})`;
  const names = new Set(listed.map((tool) => tool.name));
  const allow = server.tools?.allow;
  const missing = (allow ?? []).filter((name) => !names.has(name));
  if (missing.length > 0) {
    throw new McpServerError(
      `${where}: tools.allow names ${missing.map((name) => `'${name}'`).join(", ")}, which the server does not offer; ` +
        `it offers: ${[...names].join(", ") || "no tools"}. Fix the list.`,
    );
  }
  const unknownEffects = Object.keys(server.effects ?? {}).filter((name) => !names.has(name));
  if (unknownEffects.length > 0) {
    throw new McpServerError(
      `${where}: effects names ${unknownEffects.map((name) => `'${name}'`).join(", ")}, which the server does not offer; ` +
        `it offers: ${[...names].join(", ") || "no tools"}. Fix the names.`,
    );
  }
  for (const name of (server.tools?.deny ?? []).filter((denied) => !names.has(denied))) {
    warn(`[warning] ${where}: tools.deny names '${name}', which the server does not offer`);
  }
  const seen = new Set<string>();
  const selected: McpTool[] = [];
  for (const tool of listed) {
    if (allow !== undefined && !allow.includes(tool.name)) continue;
    if (server.tools?.deny?.includes(tool.name)) continue;
    if (seen.has(tool.name)) throw new McpServerError(`${where}: the server lists the tool '${tool.name}' twice; it cannot be offered`);
    seen.add(tool.name);
    if (tool.execution?.taskSupport === "required") {
      warn(`[warning] ${where}: tool '${tool.name}' runs only as an MCP task, which the engine does not use; it is not offered`);
      continue;
    }
    const name = advertisedName(server.name, tool.name);
    if (!TOOL_NAME_PATTERN.test(name)) {
      throw new McpServerError(
        `${where}: tool '${tool.name}' would be offered as '${name}', which is not a valid function name ` +
          "(letters, digits, _ and -, at most 64 characters); add it to tools.deny, or shorten the server's name",
      );
    }
    const effects = Object.hasOwn(server.effects ?? {}, tool.name) ? server.effects![tool.name] : undefined;
    selected.push({ name, server: server.name, tool: tool.name, description: describe(tool, server.name), inputSchema: objectSchema(tool.inputSchema), ...(effects === undefined ? {} : { effects }) });
  }
  return selected;
}

/** Refuses two tools offered under one name: an MCP tool and an exec tool, or tools of two servers. */
export function checkNameCollisions(execTools: { name: string; source: string }[], mcpTools: McpTool[], servers: McpServerConfig[]): void {
  const owners = new Map<string, string>(execTools.map((tool) => [tool.name, `the tool '${tool.name}' defined in ${tool.source}`]));
  for (const tool of mcpTools) {
    const owner = `tool '${tool.tool}' of MCP server '${tool.server}' (${servers.find((server) => server.name === tool.server)?.where ?? "agent.yaml"})`;
    const earlier = owners.get(tool.name);
    if (earlier !== undefined) {
      throw new McpServerError(`Two tools would be offered to the model as '${tool.name}': ${earlier}, and ${owner}. Rename the tool, or deny one of them with tools.deny.`);
    }
    owners.set(tool.name, owner);
  }
}

export function toMcpFunctionTool(tool: McpTool): FunctionTool {
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } };
}

function describe(tool: ListedTool, server: string): string {
  const text = tool.description?.trim() || tool.title?.trim();
  return text ? text : `Tool '${tool.name}' of MCP server '${server}'`;
}

/** The protocol requires an object schema; a server that omits `type` still gets one, so the model's function is well formed. */
function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return schema.type === "object" ? schema : { ...schema, type: "object" };
}
