// Connects to a Streamable HTTP MCP server with headers read from the environment.
import { StreamableHTTPClientTransport } from "./sdk.js";
import type { ServerLink } from "./server-link.js";

/** How long closing waits for the server to acknowledge the end of the session. */
const TERMINATE_WAIT_MS = 1_000;

export function linkHttpServer(url: string, headers: Record<string, string>): ServerLink {
  // Node's global fetch: a url server streams its answers (server-sent events), which the engine's buffered model transport does not.
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  return {
    transport,
    pid: null,
    onProtocolViolation() {
      // The SDK's HTTP transport reports a malformed body as a failed request.
    },
    async diagnose() {
      const { origin, pathname } = new URL(url);
      // The query string may carry a token: never quoted.
      return `the server is at ${origin}${pathname}`;
    },
    async close() {
      // The protocol asks a client to end its session; a server that does not answer promptly is left to expire it.
      await Promise.race([transport.terminateSession().catch(() => {}), new Promise((resolve) => setTimeout(resolve, TERMINATE_WAIT_MS).unref())]);
      await transport.close();
    },
  };
}
