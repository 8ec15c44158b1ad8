// The agent `delta tool expand|list` shows, with its MCP servers started (in the current directory, as ${CWD}) while it is shown.
import { agentHomeOf } from "../../agent/agent-home.js";
import { loadAgent, type AgentPackage } from "../../agent/load.js";
import { checkToolPrograms } from "../../agent/preflight.js";
import { NO_PROVIDER, startAgentMcp } from "../../run/mcp-start.js";
import { checkBoxLayout, checkSandbox } from "../../process/sandbox/check.js";
import { declaredSandbox } from "../../process/sandbox/policy.js";
import type { McpTool } from "../../tools/mcp/advertise.js";
import type { CliIo } from "../io.js";

/** Loads the agent at `target`, starts its MCP servers, hands both to `show`, and stops the servers. */
export async function withAgentTools(target: string, command: string, io: CliIo, show: (agent: AgentPackage, mcpTools: McpTool[] | null) => void): Promise<number> {
  const agentHome = await agentHomeOf(target, command);
  const warn = (message: string): void => io.err(`${message}\n`);
  const agent = await loadAgent(agentHome, { warn });
  // Servers start in the box a run would give them, or not at all.
  const sandbox = declaredSandbox(agent);
  await checkSandbox(sandbox, { ...agent, tools: [] }, warn);
  checkBoxLayout(sandbox, { ...agent, tools: [] }, process.cwd());
  // As a run in the current directory would find them: a tool whose program is missing is named here too.
  checkToolPrograms(agent, process.cwd());
  const mcp = await startAgentMcp(agent, { workDir: process.cwd(), provider: NO_PROVIDER, sandbox, warn });
  try {
    show(agent, mcp?.servers.tools ?? null);
  } finally {
    await mcp?.servers.close();
  }
  return 0;
}
