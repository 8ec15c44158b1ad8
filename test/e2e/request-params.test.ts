// What agent.yaml's llm block puts into the model request: the sampling fields, never a setting only the engine reads (timeouts, retries, reply bounds, pricing, the endpoint).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { CRASH_TRACE, delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-request-params-");

const LLM = [
  "  model: params-model",
  "  temperature: 0.2",
  "  max_tokens: 300",
  "  seed: 7",
  "  context_window: 64000",
  "  pricing: { input_per_million: 1, output_per_million: 2 }",
  "  timeout_ms: 30000",
  "  max_retries: 1",
  "  idle_timeout_ms: 30000",
  "  max_reply_ms: 60000",
  "  max_reply_bytes: 1000000",
  "  max_tool_calls: 8",
  "  max_reply_depth: 32",
].join("\n");

describe("the request's parameters", () => {
  it("carry agent.yaml's sampling fields and none of the engine's own llm settings", async () => {
    const server = await startMockLlm([reply.text("done")]);
    try {
      const agent = writeAgent(root, { agentYaml: `name: params\nllm:\n${LLM}\ntools:\n  - name: echo\n    exec: "echo \${text}"\n` });
      const result = await delta(["run", "--agent", agent, "-w", join(root, "ws"), "--run-id", "params", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(result.stderr).not.toMatch(CRASH_TRACE);
      expect(result.exitCode).toBe(0);
      const body = server.requests[0]!.body as Record<string, unknown>;
      expect(body).toMatchObject({ model: "params-model", temperature: 0.2, max_tokens: 300, seed: 7 });
      for (const engineOnly of ["context_window", "pricing", "timeout_ms", "max_retries", "idle_timeout_ms", "max_reply_ms", "max_reply_bytes", "max_tool_calls", "max_reply_depth", "base_url", "provider"]) {
        expect(body, engineOnly).not.toHaveProperty(engineOnly);
      }
    } finally {
      await server.close();
    }
  }, 60_000);
});
