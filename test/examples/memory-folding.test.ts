// examples/memory-folding: after many iterations the request holds the folded summary and only the last 3 iterations.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { delta, modelEnv, removeDir, tempDir } from "../e2e/harness.js";
import { EXAMPLES } from "./helpers.js";
import { messagesOf, type MockLlm, startMockLlm, type WireMessage } from "../support/mock-llm.js";
import { recordingAsScript } from "./recording.js";

const AGENT = join(EXAMPLES, "memory-folding");

let root: string;
let server: MockLlm;
beforeAll(async () => {
  root = tempDir("delta-memory-folding-");
  server = await startMockLlm(recordingAsScript(join(AGENT, "recording.jsonl")));
});
afterAll(async () => {
  await server.close();
  removeDir(root);
});

it("sends the summary of iterations 1–5 and only iterations 6–8 in full on the 9th call", async () => {
  const ws = join(root, "ws");
  const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "fold", "--format", "json", "-m", "Research the question, logging every step"], { env: modelEnv(server.baseUrl) });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", metrics: { iterations: 9 } });
  expect(server.requests).toHaveLength(9);
  expect(readFileSync(join(ws, "log.md"), "utf8").trim().split("\n")).toHaveLength(8);

  const messagesAt = (call: number) => messagesOf(server.requests[call - 1]!);
  const memoryBlock = (messages: WireMessage[]) => messages.find((m) => m.role === "system" && m.content?.startsWith("# Context Block: memory"));
  const iterationsShown = (messages: WireMessage[]) => messages.filter((m) => m.role === "assistant").map((m) => m.tool_calls?.[0]?.id);

  // Call 3: two iterations recorded, nothing to fold yet.
  expect(memoryBlock(messagesAt(3))).toBeUndefined();
  expect(iterationsShown(messagesAt(3))).toEqual(["call_mf_1", "call_mf_2"]);

  // Call 9: eight recorded; 1–5 folded into the summary, 6–8 in full, the task kept.
  const last = messagesAt(9);
  expect(last.map((m) => m.role)).toEqual(["system", "system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]);
  expect(last[2]).toMatchObject({ role: "user", content: "Research the question, logging every step" });
  expect(iterationsShown(last)).toEqual(["call_mf_6", "call_mf_7", "call_mf_8"]);
  const summary = memoryBlock(last)?.content ?? "";
  expect(summary).toContain("## Memory of iterations 1–5 (folded)");
  for (let i = 1; i <= 5; i += 1) expect(summary).toContain(`- iteration ${i}: log_step {"line":"step ${i}: `);
  expect(summary).toContain(`- iteration 5: log_step {"line":"step 5: compare A and B"} → SUCCESS: 5`);
  expect(summary).not.toContain("iteration 6");
});
