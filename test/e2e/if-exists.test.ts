// `delta run --run-id X --if-exists resume`: an executor's retry of a task meets its own run and gets what the first attempt would have given.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { pauseGate } from "../support/pause-points.js";
import { CRASH_TRACE, delta, modelEnv, readEvents, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-if-exists-");
let server: MockLlm;

const TOOLS = 'tools:\n  - name: slow\n    shell: "echo started >> progress.txt; sleep ${seconds}"\n  - name: echo\n    exec: "echo ${text}"\n';
const PRICED = `name: retried\nllm:\n  model: mock-model\n  pricing: { input_per_million: 2, output_per_million: 8 }\n${TOOLS}`;

/** `delta run` of task `task` as an executor's retry would start it: same id, same workspace, --if-exists resume. */
function retry(agent: string, ws: string, id: string, task = "process item 7", extra: string[] = [], env: Record<string, string> = {}) {
  return delta(["run", "--agent", agent, "-w", ws, "--run-id", id, "--if-exists", "resume", "-m", task, "--format", "json", ...extra], { env: { ...modelEnv(server.baseUrl), ...env } });
}

describe("--if-exists resume", () => {
  it("a COMPLETED run gives the same RunResult again from the journal, priced as journaled, exit 0, with no model request", async () => {
    server = await serve([reply.toolCalls([{ name: "echo", arguments: { text: "a" } }], null, { usage: { prompt_tokens: 100, completion_tokens: 10 } }), reply.text('{"item": 7, "ok": true}', { usage: { prompt_tokens: 150, completion_tokens: 20 } })]);
    const agent = writeAgent(root, { agentYaml: PRICED }, "agent-done");
    const ws = join(root, "ws-done");
    const first = await retry(agent, ws, "done");
    expect(first.exitCode, first.stderr).toBe(0);
    const again = await retry(agent, ws, "done");
    expect(again.stderr).not.toMatch(CRASH_TRACE);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);
    const [before, after] = [JSON.parse(first.stdout), JSON.parse(again.stdout)];
    expect(after.result).toEqual({ item: 7, ok: true });
    expect(after.status).toBe("COMPLETED");
    expect(after.metrics.usage).toEqual(before.metrics.usage);
    expect(after.metrics.usage.total_cost_usd).toBeCloseTo((250 * 2 + 30 * 8) / 1e6, 12);
    expect(after.metrics.iterations).toBe(before.metrics.iterations);
    expect(after.run_id).toBe("done");
    expect(readEvents(ws, "done").filter((event) => event.type === "ENGINE_START")).toHaveLength(1);

    // Without the flag the retry is refused, as before.
    const refused = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "done", "-m", "process item 7", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(refused.exitCode).toBe(126);
    expect(refused.stdout).toContain("already exists");
  });

  it("a FAILED run is continued, an INTERRUPTED one too", async () => {
    server = await serve([reply.toolCalls([{ name: "echo", arguments: { text: "a" } }]), reply.text("finished after the retry")]);
    const agent = writeAgent(root, { agentYaml: PRICED }, "agent-failed");
    const ws = join(root, "ws-failed");
    const failed = await retry(agent, ws, "failed", "process item 7", ["--max-iterations", "1"]);
    expect(failed.exitCode).toBe(1);
    const continued = await retry(agent, ws, "failed");
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(JSON.parse(continued.stdout)).toMatchObject({ status: "COMPLETED", result: "finished after the retry" });
    await server.close();

    server = await serve([reply.toolCalls([{ name: "slow", arguments: { seconds: "30" } }]), reply.text("resumed after the interrupt")]);
    const interruptedWs = join(root, "ws-interrupted");
    const child = spawnDelta(["run", "--agent", agent, "-w", interruptedWs, "--run-id", "int", "--if-exists", "resume", "-m", "process item 7", "--format", "json"], { env: modelEnv(server.baseUrl) });
    await waitFor(() => existsSync(join(interruptedWs, "progress.txt")));
    child.kill("SIGINT");
    expect((await child).exitCode).toBe(130);
    const resumed = await retry(agent, interruptedWs, "int");
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "resumed after the interrupt" });
    // Continued as the same task: the task is said to the model once, not once per retry.
    for (const [workDir, runId] of [[ws, "failed"], [interruptedWs, "int"]] as const) {
      expect(readEvents(workDir, runId).filter((event) => event.type === "USER_MESSAGE"), runId).toHaveLength(1);
    }
  });

  it("a run WAITING_FOR_INPUT exits 101 with its question again and asks the model nothing", async () => {
    server = await serve([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which bucket?", input_type: "text" } }])]);
    const agent = writeAgent(root, { agentYaml: PRICED }, "agent-waiting");
    const ws = join(root, "ws-waiting");
    expect((await retry(agent, ws, "waiting")).exitCode).toBe(101);
    const again = await retry(agent, ws, "waiting");
    expect(again.exitCode, again.stderr).toBe(101);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "WAITING_FOR_INPUT", interaction: { prompt: "Which bucket?", input_type: "text" } });
    expect(again.stderr).toContain("Which bucket?");
    expect(server.requests).toHaveLength(1);
  });

  it("refuses (126) a run of another task: another first message, or another agent", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, { agentYaml: PRICED }, "agent-task");
    const other = writeAgent(root, { agentYaml: PRICED }, "agent-other");
    const ws = join(root, "ws-task");
    expect((await retry(agent, ws, "task")).exitCode).toBe(0);
    const otherTask = await retry(agent, ws, "task", "process item 8");
    expect(otherTask.exitCode).toBe(126);
    expect(JSON.parse(otherTask.stdout).error.message).toContain("was started with another task");
    const otherAgent = await retry(other, ws, "task");
    expect(otherAgent.exitCode).toBe(126);
    expect(JSON.parse(otherAgent.stdout).error.message).toContain("belongs to the agent");
    expect(server.requests).toHaveLength(1);
    const noWorkspace = await delta(["run", "--agent", agent, "--run-id", "task", "--if-exists", "resume", "-m", "x", "-y"], { env: modelEnv(server.baseUrl) });
    expect(noWorkspace.exitCode).toBe(126);
    expect(noWorkspace.stderr).toContain("--if-exists resume needs --run-id <id> and -w <workspace>");
  });

  it("two retries at once: while one holds the run the other is refused, and the first completes it", async () => {
    server = await serve([reply.toolCalls([{ name: "echo", arguments: { text: "a" } }]), reply.text("done once")]);
    const agent = writeAgent(root, { agentYaml: PRICED }, "agent-race");
    const ws = join(root, "ws-race");
    expect((await retry(agent, ws, "race", "process item 7", ["--max-iterations", "1"])).exitCode).toBe(1);
    const gate = pauseGate("lock-held", root);
    const first = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "race", "--if-exists", "resume", "-m", "process item 7", "--format", "json"], { env: { ...modelEnv(server.baseUrl), ...gate.env } });
    try {
      await gate.reached();
      const second = await retry(agent, ws, "race");
      expect(second.exitCode).toBe(126);
      expect(JSON.parse(second.stdout).error.message).toMatch(/still active \(PID \d+\)/);
    } finally {
      gate.open();
    }
    const result = await first;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(JSON.parse(String(result.stdout))).toMatchObject({ status: "COMPLETED", result: "done once" });
    expect(server.requests).toHaveLength(2);
    expect(readFileSync(join(runDir(ws, "race"), "journal.jsonl"), "utf8").match(/"type":"ENGINE_END"/g)).toHaveLength(2);
  });
});
