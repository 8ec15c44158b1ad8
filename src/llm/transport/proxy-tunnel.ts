// HTTPS through an HTTP proxy: a keep-alive agent whose connections are CONNECT tunnels, so one tunnel serves a run's calls.
import { connect as netConnect, type Socket } from "node:net";
import { Agent, type AgentOptions, type RequestOptions } from "node:https";
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from "node:tls";
import type { Duplex } from "node:stream";
import { proxyAuthorization, proxyPort } from "./proxy-env.js";
import { TransportError } from "./transport-error.js";

/** The longest proxy reply head read before the tunnel is given up. */
const MAX_HEAD_BYTES = 16 * 1024;

export class TunnelAgent extends Agent {
  constructor(
    private readonly proxy: URL,
    options: AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const host = options.hostname ?? options.host ?? "localhost";
    const port = Number(options.port ?? 443);
    openTunnel(this.proxy, host, port).then(
      (socket) => {
        const { host: _host, port: _port, path: _path, ...tls } = options;
        callback?.(null, tlsConnect({ ...(tls as ConnectionOptions), socket, servername: options.servername ?? host }));
      },
      (err: Error) => callback?.(err, undefined as unknown as Duplex),
    );
    return undefined;
  }
}

/** Connects to the proxy (over TLS for an https:// proxy) and asks it for a tunnel to host:port. */
export function openTunnel(proxy: URL, host: string, targetPort: number): Promise<Socket | TLSSocket> {
  const where = `${proxy.protocol}//${proxy.host}`;
  return new Promise((resolve, reject) => {
    const port = proxyPort(proxy);
    const socket: Socket = proxy.protocol === "https:" ? tlsConnect({ host: proxy.hostname, port, servername: proxy.hostname }) : netConnect(port, proxy.hostname);
    const authority = `${host.includes(":") ? `[${host}]` : host}:${targetPort}`;
    const head = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`, ...Object.entries(proxyAuthorization(proxy)).map(([name, value]) => `${name}: ${value}`)];
    let received = Buffer.alloc(0);
    const fail = (message: string, cause?: Error): void => {
      socket.destroy();
      reject(new TransportError(`the proxy ${where} ${message}`, cause ? { cause } : undefined));
    };
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) {
        if (received.length > MAX_HEAD_BYTES) fail("sent a reply head too long to be HTTP");
        return;
      }
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("end", onEnd);
      const statusLine = received.subarray(0, received.indexOf("\r\n")).toString("latin1");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
      if (status !== 200) {
        fail(`refused the tunnel to ${authority}: ${statusLine || "no status line"}${status === 407 ? " (put the proxy's user and password in the proxy URL)" : ""}`);
        return;
      }
      // Anything after the head already belongs to the tunnel.
      const rest = received.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    const onError = (err: Error): void => fail(`could not be reached (${err.message})`, err);
    const onEnd = (): void => fail(`closed the connection before answering CONNECT ${authority}`);
    socket.on("data", onData);
    socket.once("error", onError);
    socket.once("end", onEnd);
    socket.write(`${head.join("\r\n")}\r\n\r\n`);
  });
}
