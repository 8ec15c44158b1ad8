// Turns what `--agent` or `tool expand` was given, an agent directory or its agent.yaml, into the agent directory.
import { stat } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../errors.js";

const CONFIG_FILE_NAMES = ["agent.yaml", "config.yaml"];

/** The agent directory: `target` itself, or the folder of the agent.yaml (or legacy config.yaml) it names. */
export async function agentHomeOf(target: string, flag = "--agent"): Promise<string> {
  let info;
  try {
    info = await stat(target);
  } catch {
    throw new ConfigError(`${flag} ${target}: not found; pass an agent directory or its agent.yaml (create one with \`delta init <name>\`)`);
  }
  if (info.isDirectory()) return path.resolve(target);
  if (!CONFIG_FILE_NAMES.includes(path.basename(target))) {
    throw new ConfigError(`${flag} ${target}: not an agent.yaml; pass an agent directory or its agent.yaml`);
  }
  return path.dirname(path.resolve(target));
}
