// The node:http client: the exchange, error statuses as replies, cut and refused connections, aborts, codings, and a clean process exit.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { sendHttp, type HttpExchange } from "../../../src/llm/transport/http-client.js";
import { TransportError } from "../../../src/llm/transport/transport-error.js";
import { fault, reply, startMockLlm, type MockLlm } from "../../support/mock-llm.js";

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (base: string, signal?: AbortSignal) =>
  sendHttp(new URL(`${base}/chat/completions`), { method: "POST", headers: { "Content-Type": "application/json", "X-Test": "1" }, body: JSON.stringify({ model: "m", messages: [] }), env: {}, ...(signal ? { signal } : {}) });

async function text(exchange: HttpExchange): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of exchange.chunks()) parts.push(chunk);
  return Buffer.concat(parts).toString("utf8");
}

describe("sendHttp", () => {
  it("sends method, headers and body, asks for every coding it decodes, and returns status, headers and the body", async () => {
    server = await startMockLlm([reply.text("hello")]);
    const exchange = await post(server.baseUrl);
    expect(exchange.status).toBe(200);
    expect(exchange.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(await text(exchange))).toMatchObject({ choices: [{ message: { content: "hello" } }] });
    expect(server.requests[0]).toMatchObject({ method: "POST", headers: { "x-test": "1", "accept-encoding": "gzip, deflate, br" }, body: { model: "m", messages: [] } });
  });

  it("returns error statuses as replies, not failures", async () => {
    server = await startMockLlm([fault.status(429, { retryAfter: "3" })]);
    const exchange = await post(server.baseUrl);
    expect(exchange.status).toBe(429);
    expect(exchange.headers["retry-after"]).toBe("3");
  });

  it("fails the body with a TransportError when the connection is cut before it is complete", async () => {
    server = await startMockLlm([fault.reset()]);
    const exchange = await post(server.baseUrl);
    await expect(text(exchange)).rejects.toThrow(TransportError);
  });

  it("refuses a Content-Encoding it cannot decode, naming it", async () => {
    server = await startMockLlm([reply.raw(200, "x", { "content-encoding": "zstd" })]);
    await expect(text(await post(server.baseUrl))).rejects.toThrow(/encoded as "zstd"/);
  });

  it("rejects with the abort reason at once when the signal aborts", async () => {
    server = await startMockLlm([fault.hang()]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stopped by test")), 30);
    await expect(post(server.baseUrl, controller.signal)).rejects.toThrow("stopped by test");
  });

  it("rejects a refused connection as a TransportError", async () => {
    await expect(post("http://127.0.0.1:9/v1")).rejects.toThrow(/connection failed \(.*ECONNREFUSED/);
  });

  it("does not keep a process alive after its request, even with a keep-alive server", async () => {
    const keepAlive: Server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    keepAlive.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => keepAlive.listen(0, "127.0.0.1", resolve));
    const address = keepAlive.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const dir = await mkdtemp(join(tmpdir(), "delta-http-"));
    try {
      const entry = join(dir, "entry.ts");
      const client = JSON.stringify(join(process.cwd(), "src/llm/transport/http-client.ts"));
      await writeFile(entry, `import { sendHttp } from ${client};\nconst res = await sendHttp(new URL("http://127.0.0.1:${port}/"), { method: "GET", headers: {}, env: {} });\nconst parts = [];\nfor await (const chunk of res.chunks()) parts.push(chunk);\nconsole.log(Buffer.concat(parts).toString());\n`);
      await build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", outfile: join(dir, "entry.mjs"), logLevel: "silent" });
      // The server lives in this process, so the child must be awaited, not run synchronously.
      const child = await execa(process.execPath, [join(dir, "entry.mjs")], { timeout: 5000, reject: false });
      expect(child.timedOut).toBe(false);
      expect(child.stdout).toBe("ok");
    } finally {
      keepAlive.closeAllConnections();
      keepAlive.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
