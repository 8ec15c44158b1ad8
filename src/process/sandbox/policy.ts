// The run's sandbox: the agent's policy, each tool's and server's own, and --sandbox MODE over them; journaled in ENGINE_START and kept by continue.
import { RunSandboxSchema, type RunSandbox, type SandboxMode, type SandboxPolicy } from "./policy-schema.js";

/** What the policies are read from: an agent's own policy and its tools' and MCP servers' (the validated agent.yaml). */
export interface BoxedAgent {
  sandbox: SandboxPolicy | null;
  tools: readonly { name: string; sandbox?: SandboxPolicy }[];
  /** A server without `command` is remote (HTTP): nothing of it runs here to box. */
  mcpServers: readonly { name: string; command?: readonly string[]; sandbox?: SandboxPolicy }[];
}

/** The policies agent.yaml declares, with `--sandbox MODE` over them when given. */
export function declaredSandbox(agent: BoxedAgent, override?: SandboxMode): RunSandbox {
  const tools = Object.fromEntries(agent.tools.flatMap((tool) => (tool.sandbox === undefined ? [] : [[tool.name, tool.sandbox]])));
  const servers = Object.fromEntries(agent.mcpServers.flatMap((server) => (server.sandbox === undefined ? [] : [[server.name, server.sandbox]])));
  return { agent: agent.sandbox, tools, mcp_servers: servers, ...(override === undefined ? {} : { override }) };
}

/**
 * What continue runs under: the policy the run's last ENGINE_START journaled (a run keeps its box
 * even when agent.yaml changed since, and a mode an earlier continue chose), or the agent's for a run
 * journaled before sandboxes existed; `--sandbox MODE` changes the mode from this invocation on.
 */
export function continuedSandbox(journaled: unknown, agent: BoxedAgent, override?: SandboxMode): RunSandbox {
  const kept = journaled === "none" ? { agent: null, tools: {}, mcp_servers: {} } : RunSandboxSchema.safeParse(journaled).data;
  if (kept === undefined) return declaredSandbox(agent, override);
  const mode = override ?? kept.override;
  return { agent: kept.agent, tools: kept.tools, mcp_servers: kept.mcp_servers, ...(mode === undefined ? {} : { override: mode }) };
}

/** The policy a tool runs under, or null for none (no sandbox, or mode off). */
export function toolPolicy(sandbox: RunSandbox, toolName: string): SandboxPolicy | null {
  return effective(sandbox.tools[toolName] ?? sandbox.agent, sandbox.override);
}

/** The policy a stdio MCP server runs under, or null. */
export function serverPolicy(sandbox: RunSandbox, serverName: string): SandboxPolicy | null {
  return effective(sandbox.mcp_servers[serverName] ?? sandbox.agent, sandbox.override);
}

/** The policy hooks and context generators run under: the agent's, only when it says `hooks: true`. */
export function hookPolicy(sandbox: RunSandbox): SandboxPolicy | null {
  return sandbox.agent?.hooks === true ? effective(sandbox.agent, sandbox.override) : null;
}

/** True when agent.yaml (or the journal) asks for a box anywhere, whatever --sandbox says. */
export function asksForSandbox(sandbox: RunSandbox): boolean {
  return [sandbox.agent, ...Object.values(sandbox.tools), ...Object.values(sandbox.mcp_servers)].some((policy) => policy !== null && policy.mode !== "off");
}

/** True when some tool, server or hook of `agent` will run boxed under `sandbox`: the machine must then be able to box. */
export function needsSandbox(sandbox: RunSandbox, agent: Pick<BoxedAgent, "tools" | "mcpServers">): boolean {
  return (
    agent.tools.some((tool) => toolPolicy(sandbox, tool.name) !== null) ||
    agent.mcpServers.some((server) => server.command !== undefined && serverPolicy(sandbox, server.name) !== null) ||
    hookPolicy(sandbox) !== null
  );
}

/** ENGINE_START's `sandbox`: "none" for a run without any policy, else the policies and the override. */
export function journaledSandbox(sandbox: RunSandbox): RunSandbox | "none" {
  const empty = sandbox.agent === null && Object.keys(sandbox.tools).length === 0 && Object.keys(sandbox.mcp_servers).length === 0 && sandbox.override === undefined;
  return empty ? "none" : sandbox;
}

/**
 * `--sandbox off` unboxes everything; another mode replaces the mode of the agent's policy (making
 * one when there is none) and of every tool's or server's own policy that boxes — an own `mode: off`
 * is the author's opt-out (an npx server that needs the registry) and stays off.
 */
function effective(policy: SandboxPolicy | null | undefined, override: SandboxMode | undefined): SandboxPolicy | null {
  if (override === "off") return null;
  const chosen = override === undefined || policy?.mode === "off" ? policy ?? null : { ...(policy ?? {}), mode: override };
  return chosen === null || chosen.mode === "off" ? null : chosen;
}
