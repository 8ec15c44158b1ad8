// Which runs a command means: `-w` names one workspace; without it `--agent` means all of that agent's workspaces; with neither, the current directory.
import { resolve } from "node:path";
import { agentHomeOf } from "../agent/agent-home.js";
import type { RunScope } from "../store/locate-run.js";
import { optionalString } from "./options.js";

export async function runScope(flags: Record<string, unknown>): Promise<RunScope> {
  const workDir = optionalString("-w/--work-dir", flags.workDir);
  if (workDir !== undefined) return { workDir: resolve(workDir) };
  const agent = optionalString("--agent", flags.agent);
  return agent === undefined ? { workDir: resolve(".") } : { agentHome: await agentHomeOf(agent) };
}
