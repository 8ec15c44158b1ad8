// End to end: a reply that never ends, trickles, is huge, nests deeply or asks for 10,000 tool calls is a model error (LLM_ERROR, exit 1, resumable) naming its setting.
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { requestViolations } from "../support/request-invariants.js";
import { delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-replies-");

/** A server that sends `head`, then `body()` with backpressure (so the test process never buffers it), for as long as the client reads; a request that breaks the protocol (request-invariants.ts) gets 400. */
async function streamingServer(contentType: string, body: () => AsyncIterable<string | Buffer>): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const received: Buffer[] = [];
    req.on("data", (chunk: Buffer) => received.push(chunk));
    req.on("end", () => {
      const problems = requestViolations("chat-completions", JSON.parse(Buffer.concat(received).toString("utf8")));
      if (problems.length > 0) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `test server: ${problems.join("; ")}`, type: "invalid_request_error", code: null } }));
        return;
      }
      res.writeHead(200, { "content-type": contentType });
      const source = Readable.from(body());
      source.pipe(res);
      res.on("close", () => source.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const sseChunk = (text: string): string => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;

async function failsWith(name: string, llmYaml: string, baseUrl: string, setting: string): Promise<void> {
  const agent = writeAgent(root, { agentYaml: `name: t\nllm:\n  model: m\n${llmYaml}tools:\n  - name: mark\n    exec: "touch marked"\n` }, `agent-${name}`);
  const ws = join(root, `ws-${name}`);
  const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go", "--format", "json"], { env: modelEnv(baseUrl), timeoutMs: 60_000 });
  expect(run.exitCode, run.stderr).toBe(1);
  const result = JSON.parse(run.stdout) as { status: string; error: { type: string; message: string } };
  expect(result.error.type).toBe("LLM_ERROR");
  expect(result.error.message).toContain(setting);
  expect(readEvents(ws, name).at(-1)).toMatchObject({ type: "ENGINE_END", status: "FAILED" });
  expect(run.stderr).toContain("delta continue");
  expect(existsSync(join(ws, "marked"))).toBe(false);
}

describe("replies past their bounds", () => {
  it("an endless stream ends at llm.max_reply_bytes", async () => {
    const server = await streamingServer("text/event-stream", async function* () {
      for (;;) yield sseChunk("x".repeat(16 * 1024));
    });
    try {
      await failsWith("endless", "  stream: true\n  max_reply_bytes: 4000000\n", server.baseUrl, "llm.max_reply_bytes");
    } finally {
      await server.close();
    }
  }, 90_000);

  it("a trickle of one chunk every 100 ms ends at llm.max_reply_ms, though idle_timeout_ms never fires", async () => {
    const server = await streamingServer("text/event-stream", async function* () {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        yield sseChunk("y");
      }
    });
    try {
      await failsWith("trickle", "  stream: true\n  idle_timeout_ms: 1000\n  max_reply_ms: 3000\n", server.baseUrl, "llm.max_reply_ms");
    } finally {
      await server.close();
    }
  }, 90_000);

  it("a 700 MB reply ends at the default llm.max_reply_bytes", async () => {
    const megabyte = Buffer.alloc(1 << 20, "a");
    const server = await streamingServer("application/json", async function* () {
      yield '{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"';
      for (let index = 0; index < 700; index += 1) yield megabyte;
      yield '"}}]}';
    });
    try {
      await failsWith("huge", "", server.baseUrl, "llm.max_reply_bytes");
    } finally {
      await server.close();
    }
  }, 90_000);

  it("a deeply nested reply is refused at llm.max_reply_depth", async () => {
    const depth = 200_000;
    const nested = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const server = await startMockLlm([
      reply.raw(200, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi","extra":${nested}}}]}`),
    ]);
    try {
      await failsWith("nested", "", server.baseUrl, "llm.max_reply_depth");
    } finally {
      await server.close();
    }
  }, 90_000);

  it("10,000 tool calls in one reply: none runs, at llm.max_tool_calls", async () => {
    const calls = Array.from({ length: 10_000 }, (_unused, index) => ({ id: `call_${index}`, name: "mark", arguments: {} }));
    const server = await startMockLlm([reply.toolCalls(calls)]);
    try {
      await failsWith("many-calls", "", server.baseUrl, "llm.max_tool_calls");
    } finally {
      await server.close();
    }
  }, 90_000);
});
