// The stdio side of `delta mcp serve`: one MCP session over the given streams (the process's stdin and stdout).
import type { Readable, Writable } from "node:stream";
import { createSession, type SessionOptions } from "./mcp-server.js";
import { StdioServerTransport } from "./sdk.js";

/** Serves one session; returns its close. */
export async function serveStdio(options: Omit<SessionOptions, "owner">, input: Readable, output: Writable): Promise<() => Promise<void>> {
  const server = createSession({ ...options, owner: () => "stdio" });
  await server.connect(new StdioServerTransport(input, output));
  return () => server.close();
}
