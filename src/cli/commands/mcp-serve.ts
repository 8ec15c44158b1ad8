// `delta mcp serve`: offers an agent's runs as MCP tools over stdio or Streamable HTTP (a bearer token on every request); a client that goes leaves its runs INTERRUPTED and resumable.
import { basename, resolve } from "node:path";
import { agentHomeOf } from "../../agent/agent-home.js";
import { EXIT, UsageError } from "../../errors.js";
import { ChildRuns, DEFAULT_TERM_GRACE_SECONDS } from "../../serve/child-runs.js";
import { serveToken } from "../../serve/token.js";
import { DEFAULT_IDLE_SECONDS } from "../../serve/session-liveness.js";
import { userStateDir } from "../../store/user-state.js";
import { resolveWorkspace } from "../../store/workspace.js";
import type { CliIo } from "../io.js";
import { optionalString } from "../options.js";

const DEFAULT_HOST = "127.0.0.1";

export async function mcpServe(flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const agentHome = await agentHomeOf(optionalString("--agent", flags.agent) ?? ".");
  const port = portFlag(flags.http);
  const host = optionalString("--host", flags.host) ?? DEFAULT_HOST;
  if (port === undefined && flags.host !== undefined) throw new UsageError("--host applies to --http <port>; stdio has no address");
  if (port === undefined && flags.idleTimeout !== undefined) throw new UsageError("--idle-timeout applies to --http <port>; a stdio client is gone when it closes stdin");
  const idleSeconds = secondsFlag("--idle-timeout", flags.idleTimeout, DEFAULT_IDLE_SECONDS);
  const termGraceSeconds = secondsFlag("--term-grace", flags.termGrace, DEFAULT_TERM_GRACE_SECONDS);
  const tokenFile = optionalString("--token-file", flags.tokenFile);
  if (port === undefined && tokenFile !== undefined) throw new UsageError("--token-file applies to --http <port>; a stdio client is the process that started the server");
  const workDirFlag = optionalString("-w/--work-dir", flags.workDir);
  // Refused before a workspace is made: every request over HTTP needs the token, loopback included.
  const token = port === undefined ? undefined : serveToken({ tokenFile, env: process.env, stateDir: userStateDir(), guarded: [agentHome, ...(workDirFlag === undefined ? [] : [resolve(workDirFlag)])] });
  // One workspace per server start, shared by its runs (as map-reduce shares one).
  const workspace = await resolveWorkspace({ agentHome, workDir: workDirFlag === undefined ? undefined : resolve(workDirFlag), yes: true, isTTY: false });
  const runs = new ChildRuns({ execPath: process.execPath, script: process.argv[1]!, agentHome, workDir: workspace.workDir, termGraceMs: termGraceSeconds * 1000, log: io.err });
  const agentName = basename(agentHome);
  let stop: (code: number) => void = () => {};
  const stopped = new Promise<number>((done) => (stop = done));
  const onSignal = (): void => stop(EXIT.INTERRUPTED);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let close: () => Promise<void>;
  if (port === undefined) {
    const { serveStdio } = await import("../../serve/stdio-session.js");
    close = await serveStdio({ runs, workDir: workspace.workDir, agentName }, process.stdin, process.stdout);
    // The client closed our stdin: it has gone.
    process.stdin.once("end", () => stop(0));
    process.stdin.once("close", () => stop(0));
    io.err(`delta mcp serve: agent ${agentHome}, workspace ${workspace.workDir}, on stdio\n`);
  } else {
    const { isLoopback, listenHttp } = await import("../../serve/http-listener.js");
    const listener = await listenHttp({ host, port, token: token!.token, runs, workDir: workspace.workDir, agentName, idleMs: idleSeconds * 1000, log: io.err });
    const where = token!.file === undefined ? `the token in ${token!.source}` : `the token in the file ${token!.file}${token!.source.startsWith("--token-file") ? "" : " (made for you, 0600; kept for later starts)"}`;
    io.err(`delta mcp serve: every request needs "Authorization: Bearer <token>", ${where}\n`);
    io.err(`delta mcp serve: agent ${agentHome}, workspace ${workspace.workDir}, listening on ${listener.url}\n`);
    if (!isLoopback(host)) io.err(`[warning] --host ${host} serves beyond this machine over plain HTTP: the token and every run's data cross the network unencrypted; put a TLS proxy in front, or bind 127.0.0.1\n`);
    close = () => listener.close();
  }
  const code = await stopped;
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  // Every run still going gets SIGTERM: INTERRUPTED (130), resumable with `delta continue`.
  await runs.interrupt();
  await close();
  return code;
}

function portFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--http ${String(value)}: not a port; give 0-65535 (0: any free port, printed on stderr)`);
  return port;
}

function secondsFlag(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`${name} ${String(value)}: not a number of seconds; give one above 0 (default ${fallback})`);
  return seconds;
}
