// `delta tool expand <agent.yaml | dir>`: prints every tool of an agent as the argv plan it runs (spec 2.2.7), and its MCP servers' tools.
import { stringify } from "yaml";
import { renderMcpTool, renderTool } from "../../tools/render.js";
import type { CliIo } from "../io.js";
import { withAgentTools } from "./agent-tools.js";

export function toolExpand(agentYamlPath: string, io: CliIo): Promise<number> {
  return withAgentTools(agentYamlPath, "tool expand", io, (agent, mcpTools) => {
    const view = { tools: agent.tools.map(renderTool), ...(mcpTools !== null && { mcp_tools: mcpTools.map(renderMcpTool) }) };
    io.out(stringify(view, { lineWidth: 0 }));
  });
}
