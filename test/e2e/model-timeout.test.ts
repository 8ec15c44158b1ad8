// End to end: llm.timeout_ms, set explicitly, bounds each model attempt end to end, streamed or not; the waits between attempts are not part of it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fault, reply, startMockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, setUpE2e, writeAgent } from "./harness.js";

const { root } = setUpE2e("delta-model-timeout-");

const sseChunk = (text: string): string => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;

/** A model that answers every request with a stream dripping one delta every `everyMs` (or, `whole`, a JSON body dripping a space), for as long as the client reads. */
async function drippingServer(everyMs: number, whole = false): Promise<{ baseUrl: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests += 1;
      res.writeHead(200, { "content-type": whole ? "application/json" : "text/event-stream" });
      const timer = setInterval(() => res.write(whole ? " " : sseChunk("drip ")), everyMs);
      timers.add(timer);
      res.on("close", () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function agentWith(name: string, llmYaml: string): string {
  return writeAgent(root, { agentYaml: `name: ${name}\nllm:\n  model: m\n${llmYaml}` }, name);
}

describe("llm.timeout_ms set explicitly", () => {
  it("ends a streamed reply that drips a delta every 200 ms (the idle clock never fires, max_reply_ms is 10 minutes): FAILED, naming llm.timeout_ms, once per attempt", async () => {
    const server = await drippingServer(200);
    try {
      const agent = agentWith("drip", "  stream: true\n  timeout_ms: 1500\n  max_retries: 1\n");
      const ws = join(root, "ws-drip");
      // The ceiling is generous: what is checked is that the process ended, and why.
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "drip", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 120_000 });
      expect(run.exitCode, run.stderr).toBe(1);
      const result = JSON.parse(run.stdout) as { status: string; error: { type: string; message: string } };
      expect(result).toMatchObject({ status: "FAILED", error: { type: "LLM_ERROR" } });
      expect(result.error.message).toContain("the streamed reply did not end within 1500 ms (llm.timeout_ms)");
      expect(result.error.message).toContain("failed after 2 attempts");
      const failed = readEvents(ws, "drip").filter((event) => event.type === "LLM_ATTEMPT_FAILED");
      expect(failed.map((event) => event.type === "LLM_ATTEMPT_FAILED" && event.reason)).toEqual([
        "the streamed reply did not end within 1500 ms (llm.timeout_ms)",
        "the streamed reply did not end within 1500 ms (llm.timeout_ms)",
      ]);
      expect(server.requests()).toBe(2);
    } finally {
      await server.close();
    }
  }, 150_000);

  it("ends a whole (not streamed) reply whose body drips a byte every 200 ms, naming llm.timeout_ms", async () => {
    const server = await drippingServer(200, true);
    try {
      const agent = agentWith("drip-whole", "  timeout_ms: 1500\n  max_retries: 0\n");
      const run = await delta(["run", "--agent", agent, "-w", join(root, "ws-drip-whole"), "--run-id", "whole", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 120_000 });
      expect(run.exitCode, run.stderr).toBe(1);
      expect((JSON.parse(run.stdout) as { error: { message: string } }).error.message).toContain("no answer within 1500 ms (llm.timeout_ms)");
    } finally {
      await server.close();
    }
  }, 150_000);

  it("does not count the wait between attempts: a Retry-After longer than the bound, then an answer, completes", async () => {
    // Each attempt is answered at once, so only the wait could pass the bound: 3 s is a ceiling for an answer from this
    // machine's own server even with every core busy, and the wait is 4 s.
    const server = await startMockLlm([fault.status(503, { retryAfter: "4" }), reply.text("after the wait")]);
    try {
      const agent = agentWith("waits", "  timeout_ms: 3000\n  max_retries: 1\n");
      const ws = join(root, "ws-waits");
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "waits", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: "after the wait" });
      const failed = readEvents(ws, "waits").find((event) => event.type === "LLM_ATTEMPT_FAILED");
      expect(failed).toMatchObject({ retry_in_ms: 4000 });
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("llm.timeout_ms unset", () => {
  it("leaves a streamed reply to its idle clock and llm.max_reply_ms: a drip ends at max_reply_ms, not at the whole-reply default", async () => {
    const server = await drippingServer(200);
    try {
      const agent = agentWith("unset", "  stream: true\n  max_reply_ms: 1500\n  max_retries: 0\n");
      const run = await delta(["run", "--agent", agent, "-w", join(root, "ws-unset"), "--run-id", "unset", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 120_000 });
      expect(run.exitCode, run.stderr).toBe(1);
      const result = JSON.parse(run.stdout) as { error: { message: string } };
      expect(result.error.message).toContain("llm.max_reply_ms");
      expect(result.error.message).not.toContain("llm.timeout_ms");
    } finally {
      await server.close();
    }
  }, 150_000);
});
