// Anthropic's `stop_reason: "pause_turn"` (a server-tool turn paused half-way), replayed from a real recording: the run never ends COMPLETED on the half-finished text; it fails MODEL_PAUSED, exit 1, and continues.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { messagesOf, reply, startMockLlm, type Script } from "../support/mock-llm.js";
import { recordedJson, recordedStep } from "../support/recorded.js";
import { CRASH_TRACE, delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-pause-turn-");

const PAUSED = "anthropic/pause-turn-web-search";
const YAML = 'name: paused\nllm:\n  provider: anthropic\n  model: claude-sonnet-4-5\n  max_retries: 0\ntools:\n  - name: echo\n    exec: "echo ${text}"\n';

async function delta2(args: string[], script: Script) {
  const server = await startMockLlm(script, { protocol: "anthropic" });
  try {
    const result = await delta(args, { env: modelEnv(server.baseUrl) });
    expect(result.stderr).not.toMatch(CRASH_TRACE);
    return { result, json: JSON.parse(result.stdout) as { status: string; result?: unknown; error?: { type: string; message: string } }, requests: server.requests };
  } finally {
    await server.close();
  }
}

describe("a turn the server paused (Anthropic pause_turn)", () => {
  it("is FAILED with MODEL_PAUSED, exit 1, never COMPLETED with the half-finished text; the reply is journaled and continue asks again without it", async () => {
    const agent = writeAgent(root, { agentYaml: YAML }, "agent-paused");
    const ws = join(root, "ws-paused");
    const recorded = recordedJson(PAUSED) as { stop_reason: string; content: { type: string; text?: string }[] };
    expect(recorded.stop_reason).toBe("pause_turn");

    const first = await delta2(["run", "--agent", agent, "-w", ws, "--run-id", "paused", "-m", "search", "--format", "json"], [recordedStep(PAUSED)]);
    expect(first.result.exitCode).toBe(1);
    expect(first.json).toMatchObject({ status: "FAILED", error: { type: "MODEL_PAUSED" } });
    expect(first.json.error!.message).toMatch(/paused its turn half-way \(finish_reason: pause_turn.*continue the run/);
    expect(first.result.stderr).toMatch(/MODEL_PAUSED: /);
    const [thought] = readEvents(ws, "paused").filter((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");
    expect(thought).toMatchObject({ finish_reason: "pause_turn", tool_calls: [] });
    expect(thought!.content).toBe(recorded.content.filter((block) => block.type === "text").map((block) => block.text).join(""));

    const resumed = await delta2(["continue", "--run-id", "paused", "-w", ws, "--format", "json", "--accept-endpoint"], [reply.text("All six searches done.")]);
    expect(resumed.result.exitCode).toBe(0);
    expect(resumed.json).toMatchObject({ status: "COMPLETED", result: "All six searches done." });
    expect(messagesOf(resumed.requests[0]!).map((message) => message.role)).toEqual(["user"]);
  }, 60_000);
});
