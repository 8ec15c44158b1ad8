// The node:http fetch: what the SDK needs from a Response, aborts, cut connections, and a clean process exit.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { httpFetch } from "../../../src/llm/transport/http-fetch.js";
import { fault, reply, startMockLlm, type MockLlm } from "../../support/mock-llm.js";

let server: MockLlm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (url: string, init: RequestInit = {}) =>
  httpFetch(`${url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-test": "1" }, body: JSON.stringify({ model: "m", messages: [] }), ...init });

describe("httpFetch", () => {
  it("sends method, headers and body, and returns status, headers and a readable body", async () => {
    server = await startMockLlm([reply.text("hello")]);
    const res = await post(server.baseUrl);
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toMatchObject({ choices: [{ message: { content: "hello" } }] });
    expect(server.requests[0]).toMatchObject({ method: "POST", headers: { "x-test": "1" }, body: { model: "m", messages: [] } });
  });

  it("hands over a body that reads once, and a JSON error as SyntaxError like Response.json()", async () => {
    server = await startMockLlm([reply.text("hello")]);
    const res = await post(server.baseUrl);
    expect(res.bodyUsed).toBe(false);
    expect(await res.text()).toContain("hello");
    expect(res.bodyUsed).toBe(true);
    await expect(res.json()).rejects.toThrow(TypeError);

    await server.close();
    server = await startMockLlm([fault.invalidJson()]);
    await expect((await post(server.baseUrl)).json()).rejects.toThrow(SyntaxError);
  });

  it("returns error statuses as responses, not failures", async () => {
    server = await startMockLlm([fault.status(429, { retryAfter: "3" })]);
    const res = await post(server.baseUrl);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
  });

  it("rejects when the connection is cut before the body is complete", async () => {
    server = await startMockLlm([fault.reset()]);
    await expect(post(server.baseUrl)).rejects.toThrow(/fetch failed/);
  });

  it("rejects with the abort reason at once when the signal aborts", async () => {
    server = await startMockLlm([fault.hang()]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stopped by test")), 30);
    await expect(post(server.baseUrl, { signal: controller.signal })).rejects.toThrow("stopped by test");
  });

  it("rejects a refused connection as a fetch failure", async () => {
    await expect(httpFetch("http://127.0.0.1:9/")).rejects.toThrow(/fetch failed: .*ECONNREFUSED/);
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
    const dir = await mkdtemp(join(tmpdir(), "delta-fetch-"));
    try {
      const entry = join(dir, "entry.ts");
      await writeFile(entry, `import { httpFetch } from ${JSON.stringify(join(process.cwd(), "src/llm/transport/http-fetch.ts"))};\nconst res = await httpFetch("http://127.0.0.1:${port}/");\nconsole.log(await res.text());\n`);
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
