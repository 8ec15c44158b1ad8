// `delta diff A B`: exit 0 when two runs sent equal requests (two replays of one recording), 1 with the first request that differs, part by part, for a prompt, a tool and a model change.
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { delta, runDir, setUpE2e, writeAgent } from "./harness.js";

const { root } = setUpE2e("delta-diff-");
let agent: string;
let recording: string;

const TOOLS = `tools:
  - name: note
    description: Read the notes
    shell: 'echo "run $DELTA_RUN_ID in $(pwd) at $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"'
`;

/** Replays the recording with `agentDir` in a workspace of its own; returns the run's folder. */
async function replay(name: string, agentDir: string, extra: string[] = []): Promise<string> {
  const ws = join(root, `ws-${name}`);
  const result = await delta(["run", "--agent", agentDir, "-w", ws, "--run-id", name, "--replay", recording, ...extra, "Read the notes"]);
  expect(result.exitCode, result.stderr).toBe(0);
  return runDir(ws, name);
}

/** The agent copied, with one file of it replaced. */
function changedAgent(name: string, file: string, content: string): string {
  const copy = join(root, name);
  cpSync(agent, copy, { recursive: true });
  writeFileSync(join(copy, file), content);
  return copy;
}

let first: string;
beforeAll(async () => {
  agent = writeAgent(root, { tools: TOOLS, systemPrompt: "You are a test agent.\nRead the notes, then answer in one line." });
  recording = join(root, "recording.jsonl");
  writeFileSync(recording, [{ content: null, tool_calls: [{ name: "note", arguments: {} }] }, { content: "The notes are read" }].map((line) => JSON.stringify(line)).join("\n") + "\n");
  first = await replay("first", agent);
});

describe("delta diff", () => {
  it("exits 0 for two replays of one recording, in other workspaces under other run ids, at other times", async () => {
    const second = await replay("second", agent);
    const result = await delta(["diff", first, second]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("The runs sent equal model requests: 2 model calls each.");
    expect(result.stdout).toMatch(/^ {7}1 {2}note \{\} → SUCCESS {2,}note \{\} → SUCCESS$/m);
    const json = JSON.parse((await delta(["diff", first, second, "--json"])).stdout);
    expect(json).toMatchObject({ equal: true, first_difference: null, a: { run_id: "first", model_calls: 2 }, b: { run_id: "second", model_calls: 2 } });
    expect(json.iterations.map((row: { same: boolean }) => row.same)).toEqual([true, true]);
  });

  it("shows a changed system prompt as a unified diff of it, and exits 1", async () => {
    const prompt = await replay("prompt", changedAgent("agent-prompt", "system_prompt.md", "You are a test agent.\nRead the notes twice, then answer in one line."));
    const result = await delta(["diff", first, prompt]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain("The runs differ at model call 1 (iteration 1): system prompt.");
    expect(result.stdout).toContain(["the system prompt changed", "--- a first", "+++ b prompt", "@@ -1,2 +1,2 @@", " You are a test agent.", "-Read the notes, then answer in one line.", "+Read the notes twice, then answer in one line."].join("\n"));
  });

  it("names the tool whose description changed", async () => {
    const tool = await replay("tool", changedAgent("agent-tool", "agent.yaml", `name: test-agent\nllm:\n  model: mock-model\n${TOOLS.replace("Read the notes", "Read every note")}`));
    const result = await delta(["diff", first, tool, "--json"]);
    expect(result.exitCode).toBe(1);
    const { first_difference } = JSON.parse(result.stdout);
    expect(first_difference).toMatchObject({ call: 1, iteration: { a: 1, b: 1 }, missing_in: null });
    expect(first_difference.parts).toEqual([expect.objectContaining({ part: "tools", summary: "tools changed: note: description changed" })]);
  });

  it("names a changed model", async () => {
    const model = await replay("model", agent, ["--model", "mock-model-2"]);
    const result = await delta(["diff", first, model, "--format", "json"]);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout).first_difference.parts).toEqual([{ part: "model", summary: "the model changed: mock-model → mock-model-2", a: "mock-model", b: "mock-model-2" }]);
  });

  it("finds runs by id in -w as show does, and refuses one it cannot find", async () => {
    const ws = join(root, "ws-first");
    expect((await delta(["diff", "first", "first", "-w", ws])).exitCode).toBe(0);
    const missing = await delta(["diff", "first", "nope", "-w", ws]);
    expect(missing.exitCode).toBe(126);
    expect(missing.stderr).toContain("no run nope in");
    const one = await delta(["diff", "first", "-w", ws]);
    expect(one.exitCode).toBe(126);
    expect(one.stderr).toContain("delta diff compares two runs");
  });
});
