// `delta tool expand <agent.yaml | dir>`: prints every tool of an agent as the argv plan it runs (spec 2.2.7).
import { stat } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { loadAgent } from "../../agent/load.js";
import { ConfigError } from "../../errors.js";
import { renderTool } from "../../tools/render.js";
import type { CliIo } from "../io.js";

const CONFIG_FILE_NAMES = ["agent.yaml", "config.yaml"];

export async function toolExpand(agentYamlPath: string, io: CliIo): Promise<number> {
  const agentHome = await agentHomeOf(agentYamlPath);
  const agent = await loadAgent(agentHome, { warn: (message) => io.err(`${message}\n`) });
  io.out(stringify({ tools: agent.tools.map(renderTool) }, { lineWidth: 0 }));
  return 0;
}

async function agentHomeOf(target: string): Promise<string> {
  let info;
  try {
    info = await stat(target);
  } catch {
    throw new ConfigError(`${target} not found; pass an agent directory or its agent.yaml`);
  }
  if (info.isDirectory()) return target;
  if (!CONFIG_FILE_NAMES.includes(path.basename(target))) {
    throw new ConfigError(`${target} is not an agent.yaml; pass an agent directory or its agent.yaml`);
  }
  return path.dirname(target);
}
