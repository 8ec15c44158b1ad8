// The run's tools, computed once per run: what the model is offered, and for each name what a call of it runs.
import type { Skill } from "../agent/skills/scan.js";
import { LOAD_SKILL } from "../context/skills-listing.js";
import type { ExpandedTool } from "../tools/expand.js";
import { toFunctionTool } from "../tools/function-schema.js";
import { toMcpFunctionTool } from "../tools/mcp/advertise.js";
import type { McpServers } from "../tools/mcp/servers.js";
import { ASK_HUMAN, ASK_HUMAN_TOOL } from "./ask-human.js";
import { loadSkillTool } from "./load-skill.js";
import type { CatalogueEntry, ToolCatalogue } from "./ports.js";

export function toolCatalogue(tools: readonly ExpandedTool[], mcp: Pick<McpServers, "tools" | "call"> | null, skills: readonly Skill[]): ToolCatalogue {
  const mcpTools = mcp?.tools ?? [];
  const advertised = [...tools.map(toFunctionTool), ...mcpTools.map(toMcpFunctionTool), ASK_HUMAN_TOOL, ...(skills.length > 0 ? [loadSkillTool(skills)] : [])];
  // Later entries win a shared name: built-ins, then MCP tools, over the agent's own.
  const entries = new Map<string, CatalogueEntry>();
  for (const tool of tools) entries.set(tool.name, { kind: "exec", tool });
  for (const tool of mcpTools) entries.set(tool.name, { kind: "mcp", tool, call: (...args) => mcp!.call(...args) });
  entries.set(ASK_HUMAN, { kind: "ask_human" });
  if (skills.length > 0) entries.set(LOAD_SKILL, { kind: "load_skill", skills });
  return { advertised, find: (name) => entries.get(name) };
}
