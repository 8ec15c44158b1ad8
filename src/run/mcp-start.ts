// Starts an agent's MCP servers for one engine process; the MCP client is loaded only for agents that name servers.
import { performance } from "node:perf_hooks";
import type { AgentPackage } from "../agent/load.js";
import { agentChildEnv } from "./child-env.js";
import type { ProviderChoice } from "../llm/provider-choice.js";
import { processStartedAt } from "../process/proc-stat.js";
import type { ServerProcessRecord } from "../store/run-metadata.js";
import type { McpServers } from "../tools/mcp/servers.js";
import { McpServerError } from "../errors.js";
import { redactText } from "../secrets.js";
import { serverPolicy } from "../process/sandbox/policy.js";
import { describePolicy, type RunSandbox } from "../process/sandbox/policy-schema.js";
import { openBox, type OpenBox } from "./tool-box.js";
import type { ActivitySink } from "../loop/activity.js";

/** Log lines kept while no engine.log is open yet; a server that talks more than this at start has the rest dropped. */
const MAX_EARLY_LOG_LINES = 1_000;

/** One process's servers, what to record of them, and where their log lines go. */
export interface AgentMcp {
  servers: McpServers;
  /** For metadata.json: a later process stops what a crash of this one leaves running. */
  records: ServerProcessRecord[];
  /**
   * From now on log lines (servers' stderr, their start) go to `live`; the lines logged while the
   * servers started go to `file` first (they were echoed already, with -v).
   */
  attachLog(file: (line: string) => void, live: (line: string) => void): void;
}

interface McpStartOptions {
  workDir: string;
  /** The API key, which a server's environment must not hold unless env_passthrough names it. */
  provider: Pick<ProviderChoice, "secrets" | "keyVariables">;
  /** The run's boxes: a stdio server runs in its policy's. */
  sandbox?: RunSandbox;
  signal?: AbortSignal | undefined;
  warn: (line: string) => void;
  /** -v: each log line also goes here as it is logged, before engine.log exists. */
  echo?: ((line: string) => void) | undefined;
  /** Told while the servers start, for a status line. */
  activity?: ActivitySink | undefined;
}

/** Outside a run (`delta tool expand`, `list`) no key is read: only the known key variables are kept from servers. */
export const NO_PROVIDER: McpStartOptions["provider"] = { secrets: [], keyVariables: {} };

/** Null for an agent without `mcp_servers`: nothing is loaded or started. Refuses (126) a server that cannot start. */
export async function startAgentMcp(agent: AgentPackage, options: McpStartOptions): Promise<AgentMcp | null> {
  if (agent.mcpServers.length === 0) return null;
  const loading = performance.now();
  const { resolveMcpServers, startMcpServers } = await import("../tools/mcp/servers.js");
  const resolved = resolveMcpServers(agent.mcpServers, { vars: { AGENT_HOME: agent.home, CWD: options.workDir }, environment: process.env });
  const secrets = [...options.provider.secrets, ...resolved.secrets];
  const early: string[] = [`MCP client loaded in ${Math.round(performance.now() - loading)} ms`];
  let sink: ((line: string) => void) | null = null;
  // No session redacts these yet: a server's stderr may quote what it was given.
  const echo = options.echo === undefined ? undefined : (line: string): void => options.echo!(redactText(line, secrets));
  echo?.(early[0]!);
  const log = (line: string): void => {
    if (sink !== null) return sink(line);
    echo?.(line);
    if (early.length < MAX_EARLY_LOG_LINES) early.push(line);
  };
  let servers: McpServers;
  const baseEnv = {
    ...agentChildEnv(agent, options.provider, secrets),
    // No DELTA_RUN_ID: a server serves this process, and starts before a new run's id is claimed.
    DELTA_AGENT_HOME: agent.home,
    DELTA_CWD: options.workDir,
  };
  const boxes = await openServerBoxes(agent, options, baseEnv);
  options.activity?.({ kind: "mcp-start", servers: agent.mcpServers.map((server) => server.name) });
  try {
    servers = await startMcpServers(resolved, { execTools: agent.tools, baseEnv, boxes: boxes.byServer, signal: options.signal, log, warn: options.warn });
  } catch (err) {
    await boxes.close();
    // The one redaction point of a server's refusal, which quotes its stderr.
    if (err instanceof McpServerError) throw new McpServerError(redactText(`${err.message}${boxes.note(err.message)}`, secrets), { cause: err });
    throw err;
  } finally {
    options.activity?.({ kind: "idle" });
  }
  const stopServers = servers.close.bind(servers);
  // A boxed server's proxy lives as long as the server.
  servers.close = async () => {
    await stopServers();
    await boxes.close();
  };
  const records = servers.processes.flatMap(({ server, pid }) => {
    const started = processStartedAt(pid);
    return started === null ? [] : [{ server, pid, start_time_unix: started }];
  });
  return {
    servers,
    records,
    attachLog(file, live) {
      for (const line of early.splice(0)) file(line);
      sink = live;
    },
  };
}

/** A box for every stdio server whose policy asks for one; `note` adds, to a refusal naming a boxed server, that it ran boxed and how to change it. */
async function openServerBoxes(agent: AgentPackage, options: McpStartOptions, baseEnv: Record<string, string>) {
  const opened = new Map<string, OpenBox>();
  const close = async (): Promise<void> => {
    await Promise.all([...opened.values()].map((box) => box.close()));
  };
  try {
    for (const server of agent.mcpServers) {
      const policy = options.sandbox === undefined || server.command === undefined ? null : serverPolicy(options.sandbox, server.name);
      if (policy !== null) opened.set(server.name, await openBox(policy, { workDir: options.workDir, agentHome: agent.home, passthrough: agent.envPassthrough }, baseEnv));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    byServer: new Map([...opened].map(([name, box]) => [name, { box: box.box, env: box.env }])),
    close,
    note: (message: string): string => {
      const boxed = agent.mcpServers.filter((server) => opened.has(server.name) && message.includes(`'${server.name}'`));
      return boxed
        .map((server) => `\n${server.where} ran in the sandbox (${describePolicy(options.sandbox === undefined ? null : serverPolicy(options.sandbox, server.name))}), which may have stopped it: give it its own sandbox: in agent.yaml (a server run through npx needs {mode: off}), or pass --sandbox off`)
        .join("");
    },
  };
}
