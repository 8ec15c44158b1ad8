// The environment the engine's children (tools, hooks, generators, MCP servers, delta-sessions) start from: the engine's without the run's secrets, but what agent.yaml passes on.
import type { AgentPackage } from "../agent/load.js";
import { PROVIDER_VARIABLES } from "../llm/env.js";
import type { ProviderChoice } from "../llm/provider-choice.js";
import { childEnvironment } from "../process/child-env.js";
import { otlpCredentials } from "../trace/otel-env.js";

/**
 * The variables of `env` no child gets unless env_passthrough names them: the model provider's (a tool that could read
 * the endpoint could report it, and a `delta` it starts would call it unasked), an OTLP exporter's headers and an OTLP
 * endpoint carrying user:password@ (one without credentials stays: a `delta` a tool starts joins the trace).
 */
export function withheldVariables(env: NodeJS.ProcessEnv): string[] {
  const provider = new Set(PROVIDER_VARIABLES);
  return Object.entries(env).flatMap(([name, value]) => (value !== undefined && (provider.has(name) || otlpCredentials(name, value).length > 0) ? [name] : []));
}

/** `secrets`: the run's (the API key, the values MCP servers read); env_passthrough names what children get all the same. */
export function agentChildEnv(agent: Pick<AgentPackage, "envPassthrough">, provider: Pick<ProviderChoice, "keyVariables">, secrets: readonly string[]): Record<string, string> {
  return childEnvironment(process.env, { withheld: withheldVariables(process.env), secretValues: secrets, passthrough: agent.envPassthrough, resolved: provider.keyVariables });
}
