// Which runs a command means: `-w` names one workspace; without it `--agent` means all of that agent's workspaces; with neither, where `run` put them.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { agentHomeOf } from "../agent/agent-home.js";
import type { RunScope } from "../store/locate-run.js";
import { optionalString } from "./options.js";

export async function runScope(flags: Record<string, unknown>): Promise<RunScope> {
  const workDir = optionalString("-w/--work-dir", flags.workDir);
  if (workDir !== undefined) return { workDir: resolve(workDir) };
  const agent = optionalString("--agent", flags.agent);
  if (agent !== undefined) return { agentHome: await agentHomeOf(agent) };
  return defaultScope(resolve("."));
}

/**
 * `delta run` in an agent's folder puts its runs in that agent's workspaces, so with neither flag an agent folder
 * (one with agent.yaml and no runs of its own in .delta/) means its workspaces; any other directory is the workspace.
 */
function defaultScope(cwd: string): RunScope {
  const isAgent = existsSync(join(cwd, "agent.yaml")) || existsSync(join(cwd, "config.yaml"));
  return isAgent && !existsSync(join(cwd, ".delta")) ? { agentHome: cwd } : { workDir: cwd };
}
