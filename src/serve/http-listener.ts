// The Streamable HTTP side of `delta mcp serve`: one listener at /mcp, Origin checked against DNS rebinding, a bearer token when one is set, one MCP session per client, a client gone silent taken as gone.
import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { UsageError } from "../errors.js";
import { TOKEN_VARIABLE, type ChildRuns } from "./child-runs.js";
import { createSession } from "./mcp-server.js";
import { StreamableHTTPServerTransport, isInitializeRequest } from "./sdk.js";
import { SessionLiveness } from "./session-liveness.js";

const MCP_PATH = "/mcp";
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

interface HttpOptions {
  host: string;
  port: number;
  /** The bearer token every request must carry; required for a bind beyond loopback. */
  token: string | undefined;
  runs: ChildRuns;
  workDir: string;
  agentName: string;
  /** A session with no request and no stream open this long is taken as a client that went away. */
  idleMs: number;
  log: (text: string) => void;
}

interface HttpListener {
  url: string;
  /** Stops listening and ends every session; their running runs are interrupted. */
  close(): Promise<void>;
}

function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Refuses (126) a bind beyond loopback without a token, before anything listens. */
export function checkBind(host: string, token: string | undefined): void {
  if (isLoopback(host) || (token !== undefined && token !== "")) return;
  throw new UsageError(
    `--host ${host} is not a loopback address, and anyone who can reach it could start runs: set ${TOKEN_VARIABLE} to a secret token ` +
      `that clients send as "Authorization: Bearer <token>", or bind 127.0.0.1 (the default)`,
  );
}

/** A browser page's Origin is let in only from this machine or the bound host itself: no other site can drive the server (DNS rebinding). */
function originAllowed(origin: string | undefined, host: string): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  return isLoopback(url.hostname) || url.hostname === host;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? "");
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}

export async function listenHttp(options: HttpOptions): Promise<HttpListener> {
  checkBind(options.host, options.token);
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; liveness: SessionLiveness }>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!originAllowed(req.headers.origin, options.host)) return refuse(res, 403, `Origin ${req.headers.origin} is not allowed`);
    if (options.token && !tokenMatches(req.headers.authorization, options.token)) {
      return refuse(res, 401, "a bearer token is required (Authorization: Bearer <token>)", { "www-authenticate": "Bearer" });
    }
    if (new URL(req.url ?? "/", "http://x").pathname !== MCP_PATH) return refuse(res, 404, `not found; the MCP endpoint is ${MCP_PATH}`);
    const sessionId = req.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (known !== undefined) {
      known.liveness.track(res);
      return known.transport.handleRequest(req, res);
    }
    // A session that ended (DELETE, or its client taken as gone): 404 tells the client to initialize anew (MCP specification).
    if (typeof sessionId === "string") return refuse(res, 404, `session ${sessionId} has ended; start a new one with an initialize request`);
    if (req.method !== "POST") return refuse(res, 400, "no such session; start one with an initialize request");
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      return refuse(res, 400, "the request body is not JSON");
    }
    if (!isInitializeRequest(body)) return refuse(res, 400, "no such session; start one with an initialize request");
    const liveness = new SessionLiveness(options.idleMs, () => {
      options.log(`delta mcp serve: session ${transport.sessionId} had no request or stream open for ${options.idleMs / 1000} s: its client is taken as gone, its running runs are interrupted\n`);
      void transport.close();
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, liveness }),
    });
    liveness.track(res);
    transport.onclose = () => {
      liveness.stop();
      const id = transport.sessionId;
      if (id === undefined) return;
      sessions.delete(id);
      // The client has gone (it ended its session, or the server is stopping): its runs are interrupted, resumable.
      void options.runs.interrupt(id);
    };
    const server = createSession({ runs: options.runs, workDir: options.workDir, agentName: options.agentName, owner: () => transport.sessionId ?? "" });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) refuse(res, 500, err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", (err) => reject(new UsageError(`cannot listen on ${options.host}:${options.port}: ${err.message}; choose another --host or --port`)));
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const hostInUrl = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  return {
    url: `http://${hostInUrl}:${port}${MCP_PATH}`,
    close: async () => {
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
