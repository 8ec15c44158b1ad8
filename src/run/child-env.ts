// The environment the engine's children (tools, hooks, generators, MCP servers) start from: the engine's without the run's secrets, but what agent.yaml passes on.
import type { AgentPackage } from "../agent/load.js";
import { childEnvironment } from "../process/child-env.js";
import type { ProviderChoice } from "../llm/provider-choice.js";

/** `secrets`: the run's (the API key, the values MCP servers read); env_passthrough names what children get all the same. */
export function agentChildEnv(agent: Pick<AgentPackage, "envPassthrough">, provider: Pick<ProviderChoice, "keyVariables">, secrets: readonly string[]): Record<string, string> {
  return childEnvironment(process.env, { secretValues: secrets, passthrough: agent.envPassthrough, resolved: provider.keyVariables });
}
