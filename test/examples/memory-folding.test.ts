// examples/memory-folding: past 20 iterations the window jumps to the last 10, and the summary of the dropped ones changes only then.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { delta, modelEnv, readEvents, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES } from "./helpers.js";
import { messagesOf, type MockLlm, type WireMessage } from "../support/mock-llm.js";
import { recordingAsScript } from "./recording.js";

const AGENT = join(EXAMPLES, "memory-folding");

const { root, serve } = setUpE2e("delta-memory-folding-");
let server: MockLlm;
beforeAll(async () => {
  server = await serve(recordingAsScript(join(AGENT, "recording.jsonl")));
});

it("folds the iterations the window dropped, and changes the summary only when the window jumps", async () => {
  const ws = join(root, "ws");
  const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "fold", "--format", "json", "-m", "Research the question, logging every step"], { env: modelEnv(server.baseUrl) });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", metrics: { iterations: 30 } });
  expect(server.requests).toHaveLength(30);
  expect(readFileSync(join(ws, "log.md"), "utf8").trim().split("\n")).toHaveLength(29);

  const messagesAt = (call: number) => messagesOf(server.requests[call - 1]!);
  const memoryBlock = (messages: WireMessage[]) => messages.find((m) => m.role === "system" && m.content?.startsWith("# Context Block: memory"));
  const iterationsShown = (messages: WireMessage[]) => messages.filter((m) => m.role === "assistant").map((m) => Number(m.tool_calls?.[0]?.id.replace("call_mf_", "")));
  const startsWith = (call: number) => JSON.stringify(messagesAt(call + 1)).startsWith(JSON.stringify(messagesAt(call)).slice(0, -1));

  // Calls 1–21: nothing folded, the whole conversation, each request extending the one before.
  expect(memoryBlock(messagesAt(21))).toBeUndefined();
  expect(iterationsShown(messagesAt(21))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  for (let call = 1; call < 21; call += 1) expect(startsWith(call), `call ${call + 1}`).toBe(true);

  // Call 22: 21 iterations recorded, one past max_iterations: the window jumps to the last 10 and 1–11 are folded.
  const jumped = messagesAt(22);
  expect(jumped.map((m) => m.role).slice(0, 3)).toEqual(["system", "system", "user"]);
  expect(jumped[2]).toMatchObject({ role: "user", content: "Research the question, logging every step" });
  expect(iterationsShown(jumped)).toEqual(Array.from({ length: 10 }, (_, i) => i + 12));
  const summary = memoryBlock(jumped)?.content ?? "";
  expect(summary).toContain("## Memory of older iterations (folded)");
  for (let i = 1; i <= 11; i += 1) expect(summary).toContain(`- iteration ${i}: log_step {"line":"step ${i}: `);
  expect(summary).toContain(`- iteration 5: log_step {"line":"step 5: compare A and B"} → SUCCESS: 5`);
  expect(summary).not.toContain("iteration 12");

  // Calls 22–30: the same summary, the window growing: each request starts with the whole previous one.
  for (let call = 22; call < 30; call += 1) expect(startsWith(call), `call ${call + 1}`).toBe(true);
  expect(memoryBlock(messagesAt(30))?.content).toBe(summary);

  // The README's way to see a request: delta show --request 30 prints it, its messages those the model got.
  const readme = readFileSync(join(AGENT, "README.md"), "utf8");
  expect(readme).toContain("`npx delta show --agent examples/memory-folding --last --request 30`");
  expect(readme).not.toContain(".request.messages");
  const shown = await delta(["show", "--last", "-w", ws, "--request", "30"]);
  expect(shown.exitCode, shown.stderr).toBe(0);
  expect(JSON.parse(shown.stdout).messages).toEqual(messagesAt(30).map((message) => expect.objectContaining({ role: message.role })));
  expect(memoryBlock(JSON.parse(shown.stdout).messages)?.content).toBe(summary);
  const moves = readEvents(ws, "fold").filter((event) => event.type === "CONTEXT_WINDOW");
  expect(moves).toEqual([expect.objectContaining({ iteration: 22, reason: "max_iterations", dropped_from: 1, dropped_to: 11, first_iteration: 12 })]);
});
