// Where a request's connection comes from: one keep-alive pool per destination, direct or through the proxy the environment names.
import type { ClientRequest, RequestOptions } from "node:http";
import { deferredCaContext } from "./deferred-ca.js";
import { proxyAuthorization, proxyFor, proxyPort, type ProxyEnv } from "./proxy-env.js";

// As Node's global agents: keep-alive, the most recent socket first, idle sockets closed after 5 s
// (and unref'd meanwhile, so they never hold the process open at exit).
const POOL = { keepAlive: true, scheduling: "lifo", timeout: 5000 } as const;

type Agentish = NonNullable<RequestOptions["agent"]>;
const agents = new Map<string, Agentish>();

// Loaded once, on first use: each `import()` of a built-in wraps its exports in a new namespace object, per request otherwise.
let httpModule: Promise<typeof import("node:http")> | undefined;
let httpsModule: Promise<typeof import("node:https")> | undefined;
const nodeHttp = (): Promise<typeof import("node:http")> => (httpModule ??= import("node:http"));
const nodeHttps = (): Promise<typeof import("node:https")> => (httpsModule ??= import("node:https"));

/** Opens a request to `url` on a pooled connection; node:https and TLS load only with the first HTTPS request. */
export async function openRequest(url: URL, options: RequestOptions, env: ProxyEnv): Promise<{ req: ClientRequest; proxy: URL | null }> {
  const proxy = proxyFor(url, env);
  if (proxy && url.protocol === "http:") {
    // A plain-HTTP destination is asked of the proxy itself, by its absolute URL, as curl does.
    const agent = await pooled(`forward ${proxy.href}`, () => plainAgent(proxy));
    const headers = { ...(options.headers as Record<string, string>), host: url.host, ...proxyAuthorization(proxy) };
    const request = await requestFunction(proxy.protocol);
    return { req: request({ ...options, protocol: proxy.protocol, hostname: proxy.hostname, port: proxyPort(proxy), path: url.href, headers, agent }), proxy };
  }
  if (url.protocol === "http:") {
    const agent = await pooled("direct http:", () => plainAgent(url));
    const { request } = await nodeHttp();
    return { req: request(url, { ...options, agent }), proxy };
  }
  const agent = await pooled(proxy ? `tunnel ${proxy.href}` : "direct https:", () => tlsAgent(proxy));
  const { request } = await nodeHttps();
  return { req: request(url, { ...options, agent }), proxy };
}

async function pooled(key: string, make: () => Promise<Agentish>): Promise<Agentish> {
  let agent = agents.get(key);
  if (!agent) {
    agent = await make();
    agents.set(key, agent);
  }
  return agent;
}

async function plainAgent(server: URL): Promise<Agentish> {
  if (server.protocol === "https:") return tlsAgent(null);
  const { Agent } = await nodeHttp();
  return new Agent(POOL);
}

async function tlsAgent(proxy: URL | null): Promise<Agentish> {
  const secureContext = await deferredCaContext();
  const options = { ...POOL, ...(secureContext ? { secureContext } : {}) };
  if (proxy) {
    const { TunnelAgent } = await import("./proxy-tunnel.js");
    return new TunnelAgent(proxy, options);
  }
  const { Agent } = await nodeHttps();
  return new Agent(options);
}

async function requestFunction(protocol: string): Promise<typeof import("node:http").request> {
  return protocol === "https:" ? (await nodeHttps()).request : (await nodeHttp()).request;
}
