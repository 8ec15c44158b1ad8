// Resolves `imports:` depth-first inside the agent home and merges the tools and MCP servers, last definition winning, and env_passthrough.
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { expandTool, type ExpandedTool } from "../tools/expand.js";
import type { McpServerConfig, McpServerDefinition } from "../tools/mcp/schema.js";
import type { ToolDefinition } from "../tools/schema.js";
import { ImportFileSchema } from "./schema.js";
import { readYamlFile } from "./yaml-file.js";
import { parseWithSchema } from "./zod-issues.js";

/** A YAML file that may import others, define tools and MCP servers, and name variables to pass on. */
interface ToolSource {
  absolutePath: string;
  display: string;
  imports?: string[] | undefined;
  tools?: ToolDefinition[] | undefined;
  mcp_servers?: McpServerDefinition[] | undefined;
  env_passthrough?: string[] | undefined;
}

interface CollectedTools {
  tools: ExpandedTool[];
  mcpServers: McpServerConfig[];
  /** Every file's env_passthrough, in import order, each name once. */
  envPassthrough: string[];
}

export async function collectTools(home: string, root: ToolSource): Promise<CollectedTools> {
  const merged: Merged = { tools: new Map(), mcpServers: new Map(), envPassthrough: new Set() };
  await visit(home, root, [root], merged);
  return { tools: [...merged.tools.values()], mcpServers: [...merged.mcpServers.values()], envPassthrough: [...merged.envPassthrough] };
}

interface Merged {
  tools: Map<string, ExpandedTool>;
  mcpServers: Map<string, McpServerConfig>;
  envPassthrough: Set<string>;
}

export function displayPath(home: string, absolutePath: string): string {
  const relative = path.relative(home, absolutePath);
  return isInside(relative) ? relative.split(path.sep).join("/") : absolutePath;
}

function isInside(relative: string): boolean {
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

async function visit(home: string, source: ToolSource, chain: ToolSource[], merged: Merged): Promise<void> {
  for (const [index, entry] of (source.imports ?? []).entries()) {
    const where = `${source.display}: imports[${index}]`;
    const target = path.resolve(path.dirname(source.absolutePath), entry);
    if (!(await isFile(target))) {
      throw new ConfigError(`${where}: '${entry}' not found (looked for ${target}); paths are relative to ${source.display}`);
    }
    const real = await realpath(target);
    if (!isInside(path.relative(home, real))) {
      throw new ConfigError(
        `${where}: '${entry}' resolves to ${real}, outside the agent directory ${home}; imports must stay inside the agent directory (symlinks are resolved), so copy the file into it`,
      );
    }
    const display = displayPath(home, real);
    if (chain.some((visited) => visited.absolutePath === real)) {
      const cycle = [...chain.map((visited) => visited.display), display].join(" -> ");
      throw new ConfigError(`${where}: import cycle ${cycle}; remove one of these imports`);
    }
    const file = await readYamlFile(real, display);
    const imported = parseWithSchema(ImportFileSchema, file);
    const child: ToolSource = { absolutePath: real, display, imports: imported.imports, tools: imported.tools, mcp_servers: imported.mcp_servers, env_passthrough: imported.env_passthrough };
    await visit(home, child, [...chain, child], merged);
  }
  for (const [index, definition] of uniquelyNamed(source.display, "tools", "tool", source.tools)) {
    merged.tools.set(definition.name, expandTool(definition, { file: source.display, path: `tools[${index}]` }));
  }
  for (const [index, definition] of uniquelyNamed(source.display, "mcp_servers", "MCP server", source.mcp_servers)) {
    merged.mcpServers.set(definition.name, { ...definition, where: `${source.display}: mcp_servers[${index}]` });
  }
  for (const name of source.env_passthrough ?? []) merged.envPassthrough.add(name);
}

/** The entries of one file's list with their index, refusing a name the same list already used. */
function uniquelyNamed<T extends { name: string }>(display: string, field: string, noun: string, entries: T[] | undefined): [number, T][] {
  const seen = new Map<string, number>();
  for (const [index, entry] of (entries ?? []).entries()) {
    const earlier = seen.get(entry.name);
    if (earlier !== undefined) {
      throw new ConfigError(`${display}: ${field}[${index}]: ${noun} '${entry.name}' is already defined at ${field}[${earlier}] of this file; rename or remove one`);
    }
    seen.set(entry.name, index);
  }
  return [...(entries ?? []).entries()];
}

async function isFile(target: string): Promise<boolean> {
  try {
    return (await stat(target)).isFile();
  } catch {
    return false;
  }
}
