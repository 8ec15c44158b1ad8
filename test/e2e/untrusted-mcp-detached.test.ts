// End to end: an MCP server whose detached child keeps its stdout open does not hold the engine after the model's last answer.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { stdioServerYaml } from "../support/mcp-servers.js";
import { REPO, delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-mcp-detached-");

describe("an MCP server that leaves a detached child holding its stdout", () => {
  it("lets the run end within the shutdown window, with ENGINE_END and a RunResult", async () => {
    const pidFile = join(root, "child.pid");
    const server = await startMockLlm([reply.text("finished")]);
    try {
      const yaml = stdioServerYaml("det", [process.execPath, join(REPO, "test", "fixtures", "mcp", "detached-child.mjs"), pidFile]);
      const agent = writeAgent(root, { agentYaml: `name: det\nllm:\n  model: mock-model\nmcp_servers:\n${yaml}` }, "agent-det");
      const ws = join(root, "ws");
      // The detached child holds the server's pipes for ever: a run that waited for them would meet the kill at 60 s.
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "d1", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: "finished" });
      expect(readEvents(ws, "d1").at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
    } finally {
      await server.close();
      try {
        process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
      } catch {
        // Gone already.
      }
    }
  }, 60_000);
});
