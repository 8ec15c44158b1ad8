// The filtering proxy a box with a host list reaches the network through: CONNECT and plain HTTP to listed hosts only, through the engine's own proxy if it has one.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Duplex } from "node:stream";
import { proxyAuthorization, proxyFor, proxyPort, type ProxyEnv } from "../llm/transport/proxy-env.js";
import { openTunnel } from "../llm/transport/proxy-tunnel.js";

interface HostProxy {
  /** A Unix socket in a folder only this user can enter. */
  socketPath: string;
  /** `host:port` of each connection refused so far, in order. */
  refused(): string[];
  close(): Promise<void>;
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

/** Starts the proxy; `upstreamEnv` is where the engine's own proxy settings are read (curl's variables). */
export async function startHostProxy(allowed: readonly string[], upstreamEnv: ProxyEnv): Promise<HostProxy> {
  const folder = mkdtempSync(path.join(tmpdir(), "delta-proxy-"));
  const socketPath = path.join(folder, "proxy.sock");
  const refused: string[] = [];
  const refuse = (host: string, port: number): string => {
    const target = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    refused.push(target);
    return `delta sandbox: ${target} is not in this tool's network list\n`;
  };
  const sockets = new Set<Socket | Duplex>();
  const track = (socket: Socket | Duplex): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };

  const server = createServer((req, res) => forwardPlain(req, res, allowed, upstreamEnv, refuse));
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
    const upstream = proxyFor(new URL(`https://${authority(target.host, target.port)}`), upstreamEnv);
    const opened: Promise<Duplex> = upstream === null ? directConnection(target.host, target.port) : openTunnel(upstream, target.host, target.port);
    opened.then(
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
    refused: () => [...refused],
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
function forwardPlain(req: IncomingMessage, res: ServerResponse, allowed: readonly string[], upstreamEnv: ProxyEnv, refuse: (host: string, port: number) => string): void {
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
  const upstream = proxyFor(target, upstreamEnv);
  const headers = { ...req.headers };
  delete headers["proxy-connection"];
  delete headers["proxy-authorization"];
  const options = upstream === null
    ? { host, port, method: req.method, path: `${target.pathname}${target.search}`, headers }
    : { host: upstream.hostname, port: proxyPort(upstream), method: req.method, path: target.href, headers: { ...headers, ...proxyAuthorization(upstream) } };
  const send = upstream?.protocol === "https:" ? httpsRequest : httpRequest;
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

function directConnection(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

function parseAuthority(value: string): { host: string; port: number } | null {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (match === null) return null;
  return { host: match[1] ?? match[2]!, port: Number(match[3]) };
}

function authority(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}
