// Starts every MCP server an agent names, offers their tools, and routes the model's calls; loaded only for agents with mcp_servers.
import { performance } from "node:perf_hooks";
import path from "node:path";
import { InterruptedError, McpServerError } from "../../errors.js";
import { watchForDeath } from "../../process/death-watch.js";
import { expandArgvPathVariables, expandPathVariables, type PathVariables } from "../path-variables.js";
import { checkNameCollisions, selectTools, type McpTool } from "./advertise.js";
import { connect, type CallOutcome, type McpConnection } from "./connection.js";
import { linkHttpServer } from "./http-server.js";
import { DEFAULT_MCP_TIMEOUT_MS, type EnvReference, type McpServerConfig } from "./schema.js";
import type { ServerLink } from "./server-link.js";
import { launchStdioServer } from "./stdio-server.js";
import type { SandboxBox } from "../../process/sandbox/argv.js";
import { counted } from "../../plural.js";

/** A running stdio server's process, which leads its own process group. */
interface McpServerProcess {
  server: string;
  pid: number;
}

export interface McpServers {
  /** Every tool offered, in the order of the servers, then of each server's list. */
  tools: McpTool[];
  /** Values read for headers and env from the environment: never written anywhere. */
  secrets: string[];
  processes: McpServerProcess[];
  find(name: string): McpTool | undefined;
  /** Never throws; `signal` cancels the request (the server keeps running); `meta` is sent as the request's `_meta`. */
  call(tool: McpTool, args: Record<string, unknown>, options?: { signal?: AbortSignal | undefined; meta?: Record<string, string> | undefined }): Promise<CallOutcome & { durationMs: number }>;
  /** Stops every server (stdio: its whole process group); resolves once they are gone. */
  close(): Promise<void>;
}

/** An agent's servers with every value they read from the environment in hand; nothing started yet. */
interface ResolvedServers {
  servers: McpServerConfig[];
  /** Values read for headers and env: the run's secrets from now on, and no other child's. */
  secrets: string[];
  launches: Launch[];
}

interface Launch {
  server: McpServerConfig;
  open: (baseEnv: Record<string, string>, log: (line: string) => void, sandbox?: SandboxBox) => Promise<ServerLink>;
}

interface ResolveOptions {
  /** ${AGENT_HOME} and ${CWD}; a stdio server runs in CWD unless its cwd says otherwise. */
  vars: PathVariables;
  /** Where {env: NAME} references are read. */
  environment: NodeJS.ProcessEnv;
}

/** Reads each server's headers and env references; an unset variable is refused (126) naming it. */
export function resolveMcpServers(servers: McpServerConfig[], options: ResolveOptions): ResolvedServers {
  const secrets: string[] = [];
  const launches = servers.map((server) => ({ server, open: resolveLaunch(server, options, secrets) }));
  return { servers, secrets, launches };
}

interface StartServersOptions {
  /** The agent's own tools, whose names MCP tools must not take. */
  execTools: { name: string; source: string }[];
  /** The environment a stdio server starts from, before its own env: the engine's without the run's secrets. */
  baseEnv: Record<string, string>;
  /** A boxed stdio server's box and the environment it starts from instead of baseEnv, by server name. */
  boxes?: ReadonlyMap<string, { box: SandboxBox; env: Record<string, string> }>;
  signal?: AbortSignal | undefined;
  log: (line: string) => void;
  warn: (line: string) => void;
}

/** Starts the servers side by side. If any fails, the others are stopped and the start is refused (126) naming it. */
export async function startMcpServers(resolved: ResolvedServers, options: StartServersOptions): Promise<McpServers> {
  const { secrets } = resolved;
  const started = await Promise.allSettled(resolved.launches.map((launch) => startServer(launch.server, () => {
    const boxed = options.boxes?.get(launch.server.name);
    return launch.open(boxed?.env ?? options.baseEnv, options.log, boxed?.box);
  }, options)));
  const connections = started.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
  const stopAll = (): Promise<void> => Promise.all(connections.map((entry) => entry.connection.close())).then(() => {});
  const failures = started.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as unknown] : []));
  if (failures.length > 0) {
    await stopAll();
    throw failures.find((failure) => failure instanceof InterruptedError) ?? joinFailures(failures);
  }
  let tools: McpTool[];
  try {
    tools = connections.flatMap((entry) => selectTools(entry.server, entry.connection.tools, options.warn));
    checkNameCollisions(options.execTools, tools, resolved.servers);
  } catch (err) {
    await stopAll();
    throw err;
  }
  const byServer = new Map(connections.map((entry) => [entry.server.name, entry]));
  const processes = connections.flatMap((entry) => (entry.connection.pid === null ? [] : [{ server: entry.server.name, pid: entry.connection.pid }]));
  // Closing stdin stops an idle server when the engine dies; a server in the middle of a call needs this.
  const deathWatch = watchForDeath(processes.map((entry) => entry.pid));
  let closing: Promise<void> | null = null;
  return {
    tools,
    secrets,
    processes,
    find: (name) => tools.find((tool) => tool.name === name),
    async call(tool, args, options = {}) {
      const entry = byServer.get(tool.server)!;
      const began = performance.now();
      const outcome = await entry.connection.call(tool.tool, args, { timeoutMs: entry.server.timeout_ms ?? DEFAULT_MCP_TIMEOUT_MS, signal: options.signal, meta: options.meta });
      return { ...outcome, durationMs: Math.round(performance.now() - began) };
    },
    close() {
      deathWatch?.release();
      closing ??= stopAll();
      return closing;
    },
  };
}

interface Started {
  server: McpServerConfig;
  connection: McpConnection;
}

async function startServer(server: McpServerConfig, open: () => Promise<ServerLink>, options: StartServersOptions): Promise<Started> {
  const where = describeServer(server);
  const began = performance.now();
  const link = await open();
  const timeoutMs = server.timeout_ms ?? DEFAULT_MCP_TIMEOUT_MS;
  const connection = await connect(link, { where, timeoutMs, signal: options.signal });
  const pid = connection.pid === null ? "" : `pid ${connection.pid}, `;
  options.log(`${where} ready: ${pid}${counted(connection.tools.length, "tool")} listed in ${Math.round(performance.now() - began)} ms`);
  return { server, connection };
}

function describeServer(server: McpServerConfig): string {
  return `MCP server '${server.name}' (${server.where})`;
}

/** The argv, directory and environment of a stdio server, or the URL and headers of a url server; values read from the environment join `secrets`. */
function resolveLaunch(server: McpServerConfig, options: ResolveOptions, secrets: string[]): Launch["open"] {
  const where = describeServer(server);
  const read = (field: string, reference: EnvReference): string => {
    const value = options.environment[reference.env];
    if (value === undefined || value === "") {
      throw new McpServerError(`${where}: ${field} reads the environment variable ${reference.env}, which is not set; export it before the run`);
    }
    secrets.push(value);
    return `${reference.prefix ?? ""}${value}`;
  };
  if (server.url !== undefined) {
    const headers = Object.fromEntries(Object.entries(server.headers ?? {}).map(([name, reference]) => [name, read(`headers.${name}`, reference)]));
    const url = server.url;
    return async () => linkHttpServer(url, headers);
  }
  const env = Object.fromEntries(
    Object.entries(server.env ?? {}).map(([name, value]) => [name, typeof value === "string" ? expandPathVariables(value, options.vars) : read(`env.${name}`, value)]),
  );
  // As in a tool's command: in a `sh -c` script the paths are read from DELTA_AGENT_HOME and DELTA_CWD, never pasted in.
  const argv = expandArgvPathVariables(server.command ?? [], options.vars);
  const cwd = server.cwd === undefined ? options.vars.CWD : path.resolve(options.vars.CWD, expandPathVariables(server.cwd, options.vars));
  return (baseEnv, log, sandbox) => launchStdioServer(where, { argv, cwd, env: { ...baseEnv, ...env }, sandbox }, log);
}

function joinFailures(failures: unknown[]): unknown {
  if (failures.length === 1 || !failures.every((failure) => failure instanceof McpServerError)) return failures[0];
  return new McpServerError(failures.map((failure) => (failure as McpServerError).message).join("\n"));
}
