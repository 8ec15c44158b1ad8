// The filtering proxy of a box's host list: which names and ports pass, and what it does with the rest.
import { request } from "node:http";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostAllowed, startHostProxy } from "../../../src/process/sandbox/host-proxy.js";
import { engineRoute } from "../../../src/run/engine-route.js";

describe("hostAllowed", () => {
  it("matches a name in any case, at any port unless the entry names one", () => {
    expect(hostAllowed(["api.github.com"], "API.GitHub.com", 443)).toBe(true);
    expect(hostAllowed(["localhost:8080"], "localhost", 8080)).toBe(true);
    expect(hostAllowed(["localhost:8080"], "localhost", 8081)).toBe(false);
    expect(hostAllowed(["api.github.com"], "evil.com", 443)).toBe(false);
  });

  it("lets *.domain match names below the domain, not the domain itself nor a name that only ends like it", () => {
    expect(hostAllowed(["*.pypi.org"], "files.pypi.org", 443)).toBe(true);
    expect(hostAllowed(["*.pypi.org"], "pypi.org", 443)).toBe(false);
    expect(hostAllowed(["*.pypi.org"], "evilpypi.org", 443)).toBe(false);
  });

  it("matches IPv6 addresses written in brackets", () => {
    expect(hostAllowed(["[::1]:8080"], "::1", 8080)).toBe(true);
  });
});

describe("startHostProxy", () => {
  let target: Server;
  let port: number;
  beforeAll(async () => {
    target = createServer((_req, res) => res.end("reached\n"));
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    port = (target.address() as AddressInfo).port;
  });
  afterAll(() => target.close());

  /** A plain-HTTP GET for `url` through the proxy's socket: status and body. */
  function get(socketPath: string, url: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
  }

  it("forwards a listed host, refuses another with 403, and records the refusal", async () => {
    const proxy = await startHostProxy([`localhost:${port}`], engineRoute({}));
    try {
      expect(await get(proxy.socketPath, `http://localhost:${port}/`)).toEqual({ status: 200, body: "reached\n" });
      const refused = await get(proxy.socketPath, `http://127.0.0.1:${port}/`);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain(`127.0.0.1:${port} is not in this tool's network list`);
      expect(proxy.refused()).toEqual({ targets: [`127.0.0.1:${port}`], more: 0 });
    } finally {
      await proxy.close();
    }
  });

  it("sends an allowed request through the engine's own proxy when one is set", async () => {
    const seen: string[] = [];
    const upstream = createServer((req, res) => {
      seen.push(req.url ?? "");
      res.end("via upstream\n");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const proxy = await startHostProxy(["example.test"], engineRoute({ http_proxy: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` }));
    try {
      expect(await get(proxy.socketPath, "http://example.test/page")).toEqual({ status: 200, body: "via upstream\n" });
      expect(seen).toEqual(["http://example.test/page"]);
    } finally {
      await proxy.close();
      upstream.close();
    }
  });
});
