// The filtering proxy a box with a host list reaches the network through: CONNECT and plain HTTP to listed hosts only, through the engine's own proxy if it has one.
import { lstatSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import path from "node:path";
import type { Duplex } from "node:stream";

/**
 * How the engine itself reaches the network (its own proxy settings, read by the caller): the box's proxy forwards
 * what it allows through it, and knows no transport of its own.
 */
export interface EngineRoute {
  /** A connection to `host:port`: a tunnel through the engine's proxy for that host, or a direct one. */
  connect(host: string, port: number): Promise<Duplex>;
  /** Where a plain http:// request to `target` goes when the engine has a proxy for it (and the headers it adds), or null to send it directly. */
  plainProxy(target: URL): { host: string; port: number; tls: boolean; headers: Record<string, string> } | null;
}

interface HostProxy {
  /** A Unix socket in a folder only this user can enter, which no box sees: the engine connects to it for the box's forwarder. */
  socketPath: string;
  /** What the proxy refused so far: each distinct `host:port` once, in order, at most MAX_REFUSED_TARGETS, and how many refusals that list leaves out. */
  refused(): RefusedConnections;
  close(): Promise<void>;
}

export interface RefusedConnections {
  targets: string[];
  /** Refusals of targets not in `targets` (the list was full). */
  more: number;
}

/** Distinct refused targets a call's record keeps: a tool refused in a loop must not grow the engine or its observation. */
const MAX_REFUSED_TARGETS = 20;
/** A target as recorded is cut to this: a DNS name is at most 253 characters, a port 5 more. */
const MAX_TARGET_CHARS = 262;

/**
 * Where the engine's proxies put their sockets: a folder of this user's under /tmp, which every box
 * replaces by a private /tmp of its own (and hides where a box binds a root that holds it). Never under
 * TMPDIR: a TMPDIR outside /tmp is visible, read-only, in every box, and a socket is reachable through a
 * read-only mount.
 */
export function proxySocketsDir(): string {
  return path.join("/tmp", `delta-sockets-${process.getuid?.() ?? "user"}`);
}

/** True when `host:port` is in `allowed` (entries `host`, `host:port`, `*.domain`; names compared without case). */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((entry) => {
    const match = /^(.*?)(?::(\d+))?$/.exec(entry.toLowerCase())!;
    const pattern = match[1]!.replace(/^\[(.*)\]$/, "$1");
    if (match[2] !== undefined && Number(match[2]) !== port) return false;
    if (pattern.startsWith("*.")) return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
    return name === pattern;
  });
}

/** Starts the proxy; what it allows goes out by `route`, the engine's own way to the network. */
export async function startHostProxy(allowed: readonly string[], route: EngineRoute): Promise<HostProxy> {
  const folder = mkdtempSync(path.join(privateFolder(proxySocketsDir()), "proxy-"));
  const socketPath = path.join(folder, "proxy.sock");
  const targets: string[] = [];
  let more = 0;
  const refuse = (host: string, port: number): string => {
    const whole = authority(host, port);
    const target = whole.length > MAX_TARGET_CHARS ? `${whole.slice(0, MAX_TARGET_CHARS - 1)}…` : whole;
    if (!targets.includes(target)) {
      if (targets.length < MAX_REFUSED_TARGETS) targets.push(target);
      else more += 1;
    }
    return `delta sandbox: ${target} is not in this tool's network list\n`;
  };
  const sockets = new Set<Socket | Duplex>();
  const track = (socket: Socket | Duplex): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };

  const server = createServer((req, res) => forwardPlain(req, res, allowed, route, refuse));
  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    client.on("error", () => client.destroy());
    const target = parseAuthority(req.url ?? "");
    if (target === null) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    if (!hostAllowed(allowed, target.host, target.port)) {
      const body = refuse(target.host, target.port);
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    route.connect(target.host, target.port).then(
      (remote) => {
        track(remote);
        remote.on("error", () => client.destroy());
        client.on("close", () => remote.destroy());
        remote.on("close", () => client.destroy());
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) remote.write(head);
        remote.pipe(client);
        client.pipe(remote);
      },
      (error: Error) => client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${error.message}\n`),
    );
  });
  server.on("connection", track);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    refused: () => ({ targets: [...targets], more }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          rmSync(folder, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}

/** A request for an absolute http:// URL, forwarded as is (through the engine's proxy when it has one). */
function forwardPlain(req: IncomingMessage, res: ServerResponse, allowed: readonly string[], route: EngineRoute, refuse: (host: string, port: number) => string): void {
  let target: URL;
  try {
    target = new URL(req.url ?? "");
  } catch {
    res.writeHead(400, { "Content-Type": "text/plain" }).end("delta sandbox: the proxy takes absolute http:// URLs and CONNECT\n");
    return;
  }
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = target.port === "" ? 80 : Number(target.port);
  if (target.protocol !== "http:" || !hostAllowed(allowed, host, port)) {
    res.writeHead(403, { "Content-Type": "text/plain", Connection: "close" }).end(refuse(host, port));
    return;
  }
  const upstream = route.plainProxy(target);
  const headers = { ...req.headers };
  delete headers["proxy-connection"];
  delete headers["proxy-authorization"];
  const options = upstream === null
    ? { host, port, method: req.method, path: `${target.pathname}${target.search}`, headers }
    : { host: upstream.host, port: upstream.port, method: req.method, path: target.href, headers: { ...headers, ...upstream.headers } };
  const send = upstream?.tls === true ? httpsRequest : httpRequest;
  const outgoing = send(options, (reply) => {
    res.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(res);
  });
  outgoing.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "Content-Type": "text/plain" });
    res.end(`${error.message}\n`);
  });
  req.pipe(outgoing);
}

/** `dir`, made 0700 if missing, and refused unless it is this user's own folder that no one else may enter (another user could have made it first). */
export function privateFolder(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stats = lstatSync(dir);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private folder of this user (a folder, owned by uid ${uid}, mode 0700); remove it, and the engine makes it again`);
  }
  return dir;
}

function parseAuthority(value: string): { host: string; port: number } | null {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (match === null) return null;
  return { host: match[1] ?? match[2]!, port: Number(match[3]) };
}

/** `host:port`, an IPv6 address in brackets. */
export function authority(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}
