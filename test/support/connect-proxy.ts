// A forwarding HTTP proxy on 127.0.0.1 for tests: CONNECT tunnels for HTTPS, absolute-form requests for HTTP, each one counted.
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";

export interface ConnectProxy {
  /** e.g. "http://127.0.0.1:43121" — what HTTPS_PROXY / http_proxy should be. */
  readonly url: string;
  /** The `host:port` of every CONNECT asked for, in order. */
  readonly tunnels: string[];
  /** The absolute URLs of plain-HTTP requests forwarded. */
  readonly forwarded: string[];
  /** The Proxy-Authorization headers received (CONNECT and forwarded alike). */
  readonly authorizations: (string | undefined)[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const tunnels: string[] = [];
  const forwarded: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res) => {
    forwarded.push(req.url ?? "");
    authorizations.push(req.headers["proxy-authorization"]);
    const target = new URL(req.url ?? "");
    const { "proxy-authorization": _auth, ...headers } = req.headers;
    const upstream = httpRequest(target, { method: req.method, headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push(req.url ?? "");
    authorizations.push(req.headers["proxy-authorization"]);
    sockets.add(client);
    const [host, port] = (req.url ?? "").split(":");
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    forwarded,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
