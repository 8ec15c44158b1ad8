// `delta tool list <agent dir | agent.yaml>`: one line per tool the model is offered — its name, its kind, the sandbox it runs in, its description.
import { ASK_HUMAN_TOOL } from "../../loop/ask-human.js";
import { loadSkillTool } from "../../loop/load-skill.js";
import { describePolicy } from "../../process/sandbox/policy-schema.js";
import type { CliIo } from "../io.js";
import { withAgentTools } from "./agent-tools.js";

const DESCRIPTION_CHARS = 100;

export function toolList(target: string, io: CliIo): Promise<number> {
  return withAgentTools(target, "tool list", io, (agent, mcpTools) => {
    const serverBox = (name: string): string => {
      const server = agent.mcpServers.find((candidate) => candidate.name === name);
      return server?.url !== undefined ? "sandbox: none (url server)" : `sandbox: ${describePolicy(server?.sandbox ?? agent.sandbox)}`;
    };
    const rows = [
      ...agent.tools.map((tool) => [tool.name, tool.mode, `sandbox: ${describePolicy(tool.sandbox ?? agent.sandbox)}`, tool.description]),
      ...(mcpTools ?? []).map((tool) => [tool.name, `mcp ${tool.server}`, serverBox(tool.server), tool.description]),
      [ASK_HUMAN_TOOL.function.name, "built-in", "sandbox: none (in the engine)", ASK_HUMAN_TOOL.function.description],
      ...(agent.skills.length > 0 ? [loadSkillTool(agent.skills)].map((tool) => [tool.function.name, "built-in", "sandbox: none (in the engine)", tool.function.description]) : []),
    ];
    io.out(formatRows(rows));
  });
}

/** Columns padded to their widest cell; a description keeps its first line, cut to a readable length. */
function formatRows(rows: string[][]): string {
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map(([name, kind, box, description]) => {
      const line = description!.split("\n")[0]!.trim();
      const short = line.length > DESCRIPTION_CHARS ? `${line.slice(0, DESCRIPTION_CHARS - 1)}…` : line;
      return `${name!.padEnd(widths[0]!)}  ${kind!.padEnd(widths[1]!)}  ${box!.padEnd(widths[2]!)}  ${short}\n`;
    })
    .join("");
}
