// The engine's own way to the network, as its proxy settings (curl's variables) say: what a box's filtering proxy forwards the allowed connections through.
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { authority, type EngineRoute } from "../process/sandbox/host-proxy.js";
import { proxyAuthorization, proxyFor, proxyPort, type ProxyEnv } from "../llm/transport/proxy-env.js";
import { openTunnel } from "../llm/transport/proxy-tunnel.js";

/** The route of `env`'s proxy settings: a tunnel (CONNECT) through the proxy that serves a host, or a direct connection where none does. */
export function engineRoute(env: ProxyEnv): EngineRoute {
  return {
    connect: (host, port) => {
      const proxy = proxyFor(new URL(`https://${authority(host, port)}`), env);
      return proxy === null ? directConnection(host, port) : openTunnel(proxy, host, port);
    },
    plainProxy: (target) => {
      const proxy = proxyFor(target, env);
      return proxy === null ? null : { host: proxy.hostname, port: proxyPort(proxy), tls: proxy.protocol === "https:", headers: proxyAuthorization(proxy) };
    },
  };
}

function directConnection(host: string, port: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}
