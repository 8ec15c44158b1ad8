// The real `delta` through a real forwarding proxy on 127.0.0.1: HTTPS by one CONNECT tunnel kept for the run, HTTP by absolute URL, NO_PROXY direct.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startConnectProxy, type ConnectProxy } from "../support/connect-proxy.js";
import { reply, startMockLlm, type MockLlm, type Step } from "../support/mock-llm.js";
import { delta, modelEnv, REPO, writeAgent, setUpE2e } from "./harness.js";

const TLS = join(REPO, "test/fixtures/tls");
const tls = { key: readFileSync(join(TLS, "server.key"), "utf8"), cert: readFileSync(join(TLS, "server.pem"), "utf8") };

const { root } = setUpE2e("delta-proxy-");
let agent: string;
let server: MockLlm | undefined;
let proxy: ConnectProxy | undefined;
beforeAll(() => {
  agent = writeAgent(root);
});
afterEach(async () => {
  await server?.close();
  await proxy?.close();
  server = proxy = undefined;
});

/** Three model calls: two tool turns, then the answer. */
const threeCalls = (): Step[] => [reply.toolCalls([{ name: "echo", arguments: { text: "one" } }]), reply.toolCalls([{ name: "echo", arguments: { text: "two" } }]), reply.text("done")];
const noProxyVariables = { HTTPS_PROXY: "", https_proxy: "", HTTP_PROXY: "", http_proxy: "", ALL_PROXY: "", all_proxy: "", NO_PROXY: "", no_proxy: "" };

async function runWith(name: string, env: Record<string, string>) {
  return delta(["run", "--agent", agent, "-w", join(root, `ws-${name}`), "--run-id", name, "-m", "go", "--format", "json"], { env: { ...noProxyVariables, ...env } });
}

describe("proxies from the environment", () => {
  it("reaches an HTTPS model through HTTPS_PROXY with one CONNECT tunnel kept alive for the whole run", async () => {
    server = await startMockLlm(threeCalls(), { tls });
    proxy = await startConnectProxy();
    const result = await runWith("tunnel", { ...modelEnv(server.baseUrl), NODE_EXTRA_CA_CERTS: join(TLS, "ca.pem"), HTTPS_PROXY: proxy.url });
    expect(result.exitCode).toBe(0);
    expect(server.requests).toHaveLength(3);
    expect(proxy.tunnels).toEqual([new URL(server.baseUrl).host]);
    expect(server.connections()).toBe(1);
  });

  it("asks a plain-HTTP model of http_proxy by absolute URL, with the proxy's credentials from its URL", async () => {
    server = await startMockLlm(threeCalls());
    proxy = await startConnectProxy();
    const withCredentials = proxy.url.replace("http://", "http://user:pa%20ss@");
    const result = await runWith("forward", { ...modelEnv(server.baseUrl), http_proxy: withCredentials });
    expect(result.exitCode).toBe(0);
    expect(proxy.forwarded).toEqual(Array.from({ length: 3 }, () => `${server!.baseUrl}/chat/completions`));
    expect(proxy.authorizations).toEqual(Array.from({ length: 3 }, () => `Basic ${Buffer.from("user:pa ss").toString("base64")}`));
  });

  it("goes direct to a host NO_PROXY lists", async () => {
    server = await startMockLlm(threeCalls());
    proxy = await startConnectProxy();
    const result = await runWith("bypass", { ...modelEnv(server.baseUrl), http_proxy: proxy.url, NO_PROXY: "localhost,127.0.0.0/8" });
    expect(result.exitCode).toBe(0);
    expect(proxy.forwarded).toEqual([]);
    expect(server.connections()).toBe(1);
  });

  it("refuses a SOCKS proxy before anything runs (126), naming the variable", async () => {
    server = await startMockLlm(threeCalls());
    const result = await runWith("socks", { ...modelEnv(server.baseUrl), http_proxy: "socks5://127.0.0.1:1080" });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toMatch(/http_proxy names a socks5 proxy/);
    expect(server.requests).toHaveLength(0);
  });
});
