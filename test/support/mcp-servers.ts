// The MCP servers tests run: two real reference servers from npm, the misbehaving fixtures, and the request-logging wrapper.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../e2e/harness.js";

const SERVERS = join(REPO, "node_modules", "@modelcontextprotocol");
const FIXTURES = join(REPO, "test", "fixtures", "mcp");

/** argv of @modelcontextprotocol/server-filesystem serving `root`. */
export function filesystemServer(root: string): string[] {
  return [process.execPath, join(SERVERS, "server-filesystem", "dist", "index.js"), root];
}

/** argv of @modelcontextprotocol/server-everything over stdio. */
export function everythingServer(): string[] {
  return [process.execPath, join(SERVERS, "server-everything", "dist", "index.js"), "stdio"];
}

/** The everything server's entry, for its Streamable HTTP mode. */
export const EVERYTHING_ENTRY = join(SERVERS, "server-everything", "dist", "index.js");

/** argv of a fixture server: one that fails to start or to list its tools, or fragile-server, which starts well and then fails its calls. */
export function fixtureServer(name: "hang-at-initialize" | "exit-at-start" | "close-stdin-at-start" | "garbage-on-stdout" | "error-at-list" | "fragile-server"): string[] {
  return [process.execPath, join(FIXTURES, `${name}.mjs`)];
}

/** `server` behind a wrapper that appends each request it is sent to `log` (with --linger, it ignores stdin EOF). */
export function logged(log: string, server: string[], options: { linger?: boolean } = {}): string[] {
  return [process.execPath, join(FIXTURES, "request-log.mjs"), log, ...(options.linger ? ["--linger"] : []), "--", ...server];
}

export interface LoggedRequest {
  wrapper: number;
  event?: string;
  server?: number;
  /** The directory the server was started in (the "start" entry). */
  cwd?: string;
  method?: string;
  tool?: string | null;
  /** The request's params._meta, when it had one. */
  meta?: Record<string, unknown>;
}

export function loggedRequests(log: string): LoggedRequest[] {
  try {
    return readFileSync(log, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as LoggedRequest);
  } catch {
    return [];
  }
}

/** The tools/call requests in the log, by tool name. */
export function toolCalls(log: string): string[] {
  return loggedRequests(log).filter((entry) => entry.method === "tools/call").map((entry) => entry.tool ?? "");
}

/** An agent.yaml line list for one stdio server, as YAML flow sequences (JSON is valid YAML). */
export function stdioServerYaml(name: string, argv: string[], extra = ""): string {
  return `  - name: ${name}\n    command: ${JSON.stringify(argv)}\n${extra}`;
}
