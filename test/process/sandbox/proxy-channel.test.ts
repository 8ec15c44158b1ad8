// A proxied box's forwarder gets each upstream connection from the engine over its IPC channel, so the box needs no Unix socket; the command it runs gets no end of that channel.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { carryProxyConnections } from "../../../src/process/sandbox/proxy-channel.js";
import { startHostProxy } from "../../../src/process/sandbox/host-proxy.js";
import { engineRoute } from "../../../src/run/engine-route.js";
import { REPO } from "../../e2e/harness.js";

const FORWARDER = join(REPO, "dist", "sandbox-forwarder.cjs");

let target: Server;
let targetPort: number;
beforeAll(async () => {
  target = createServer((_req, res) => res.end("reached\n"));
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetPort = (target.address() as AddressInfo).port;
});
afterAll(() => target.close());

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createTcpServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe("the forwarder and the engine's end of its channel", () => {
  it("carry a listed request through the proxy and a refused one to its 403; the command holds no channel", async () => {
    const proxy = await startHostProxy([`localhost:${targetPort}`], engineRoute({}));
    const port = await freePort();
    const script = [
      "const http = require('http'); const fs = require('fs');",
      "const get = (url) => new Promise((done) => http.get({ host: '127.0.0.1', port: " + port + ", path: url, headers: { host: new URL(url).host } }, (res) => { let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => done(res.statusCode + ' ' + body.trim())); }));",
      // Above stdio (whose pipes are socket pairs too): what the command inherited.
      "const links = fs.readdirSync('/proc/self/fd').filter((fd) => Number(fd) > 2).map((fd) => { try { return fs.readlinkSync('/proc/self/fd/' + fd); } catch { return ''; } });",
      `(async () => { console.log(await get('http://localhost:${targetPort}/')); console.log(await get('http://127.0.0.1:${targetPort}/')); console.log('sockets: ' + links.filter((link) => link.startsWith('socket:')).length); })();`,
    ].join("\n");
    try {
      const child = spawn(process.execPath, [FORWARDER, String(port), "--", process.execPath, "-e", script], { stdio: ["ignore", "pipe", "pipe", "ipc"] });
      carryProxyConnections(child, proxy.socketPath);
      let stdout = "";
      let stderr = "";
      child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(code, stderr).toBe(0);
      expect(stdout).toBe(`200 reached\n403 delta sandbox: 127.0.0.1:${targetPort} is not in this tool's network list\nsockets: 0\n`);
      expect(proxy.refused()).toEqual({ targets: [`127.0.0.1:${targetPort}`], more: 0 });
    } finally {
      await proxy.close();
    }
  }, 30_000);
});
