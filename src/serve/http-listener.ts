// The Streamable HTTP side of `delta mcp serve`: one listener at /mcp that admits only its user — the Host its own (DNS rebinding), the Origin this machine's, the bearer token on every request, a body bounded before it is read, sessions bounded in number — one MCP session per client, a client gone silent taken as gone.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { UsageError } from "../errors.js";
import type { ChildRuns } from "./child-runs.js";
import { createSession } from "./mcp-server.js";
import { StreamableHTTPServerTransport, isInitializeRequest } from "./sdk.js";
import { SessionLiveness } from "./session-liveness.js";
import { tokenMatches } from "./token.js";

const MCP_PATH = "/mcp";
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);
/** A request body past this is refused (413) before it is read on: far above any tool call's arguments, the bound the MCP SDK keeps too. */
const MAX_BODY_BYTES = 4 << 20;
/** Sessions open at once: more than any one user's clients need, fewer than would exhaust the server. */
const MAX_SESSIONS = 32;

interface HttpOptions {
  host: string;
  port: number;
  /** The bearer token every request must carry (serve/token.ts). */
  token: string;
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

export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The names the server answers to in a Host header: loopback, the bound address, and for a wildcard bind this machine's addresses and name. */
function ownHostNames(host: string): Set<string> {
  const names = new Set(["localhost", "127.0.0.1", "[::1]"]);
  const bracketed = (address: string): string => (address.includes(":") ? `[${address.replace(/^\[|\]$/g, "")}]` : address);
  if (!WILDCARD_HOSTS.has(host)) return names.add(bracketed(host).toLowerCase());
  names.add(hostname().toLowerCase());
  for (const addresses of Object.values(networkInterfaces())) for (const entry of addresses ?? []) if (entry.family === "IPv4" || !entry.address.includes("%")) names.add(bracketed(entry.address).toLowerCase());
  return names;
}

/** The Host header must name this server and its port: a page whose own name was rebound to this address sends its own name. */
function hostAllowed(header: string | undefined, names: Set<string>, port: number): boolean {
  if (header === undefined) return false;
  let url: URL;
  try {
    url = new URL(`http://${header}`);
  } catch {
    return false;
  }
  if (url.username !== "" || url.pathname !== "/" || url.search !== "") return false;
  return names.has(url.hostname.toLowerCase()) && (url.port === "" ? port === 80 : Number(url.port) === port);
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

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

class BodyTooLarge extends Error {}

/** The body as JSON, refused past MAX_BODY_BYTES by its declared length before a byte is read, or as soon as the bytes read pass it. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}

/** The 413 goes out at once and the connection closes: the rest of a huge body is never read. */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader("connection", "close");
  refuse(res, 413, `the request body is larger than ${MAX_BODY_BYTES} bytes; nothing was read past that`);
  res.once("finish", () => req.destroy());
}

export async function listenHttp(options: HttpOptions): Promise<HttpListener> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; liveness: SessionLiveness }>();
  /** Sessions being initialized, not yet in `sessions`: counted against the bound too. */
  let opening = 0;
  let names = new Set<string>();
  let port = options.port;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host, names, port)) {
      return refuse(res, 403, `Host ${JSON.stringify(req.headers.host ?? "")} is not this server's (it answers to ${[...names].map((name) => `${name}:${port}`).join(", ")})`);
    }
    if (!originAllowed(req.headers.origin, options.host)) return refuse(res, 403, `Origin ${req.headers.origin} is not allowed`);
    if (!tokenMatches(req.headers.authorization, options.token)) {
      return refuse(res, 401, "a bearer token is required (Authorization: Bearer <token>); the server printed where it is when it started", { "www-authenticate": "Bearer" });
    }
    if (new URL(req.url ?? "/", "http://x").pathname !== MCP_PATH) return refuse(res, 404, `not found; the MCP endpoint is ${MCP_PATH}`);
    let body: unknown;
    if (req.method === "POST") {
      try {
        body = await readJson(req);
      } catch (err) {
        if (err instanceof BodyTooLarge) return refuseTooLarge(req, res);
        return refuse(res, 400, "the request body is not JSON");
      }
    }
    const sessionId = req.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (known !== undefined) {
      known.liveness.track(res);
      return known.transport.handleRequest(req, res, body);
    }
    // A session that ended (DELETE, or its client taken as gone): 404 tells the client to initialize anew (MCP specification).
    if (typeof sessionId === "string") return refuse(res, 404, `session ${sessionId} has ended; start a new one with an initialize request`);
    if (req.method !== "POST" || !isInitializeRequest(body)) return refuse(res, 400, "no such session; start one with an initialize request");
    if (sessions.size + opening >= MAX_SESSIONS) {
      return refuse(res, 503, `${MAX_SESSIONS} sessions are open, the most this server keeps; end one (HTTP DELETE) or wait until an idle one is taken as gone`, { "retry-after": "10" });
    }
    opening += 1;
    try {
      await openSession(req, res, body);
    } finally {
      opening -= 1;
    }
  };
  const openSession = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
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
  port = (http.address() as AddressInfo).port;
  names = ownHostNames(options.host);
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
