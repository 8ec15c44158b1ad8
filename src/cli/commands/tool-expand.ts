// `delta tool expand <agent.yaml | dir>`: prints every tool of an agent as the argv plan it runs (spec 2.2.7).
import { stringify } from "yaml";
import { agentHomeOf } from "../../agent/agent-home.js";
import { loadAgent } from "../../agent/load.js";
import { renderTool } from "../../tools/render.js";
import type { CliIo } from "../io.js";

export async function toolExpand(agentYamlPath: string, io: CliIo): Promise<number> {
  const agentHome = await agentHomeOf(agentYamlPath, "tool expand");
  const agent = await loadAgent(agentHome, { warn: (message) => io.err(`${message}\n`) });
  io.out(stringify({ tools: agent.tools.map(renderTool) }, { lineWidth: 0 }));
  return 0;
}
