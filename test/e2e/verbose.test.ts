// End to end: -v mirrors the engine log (model calls, tool runs, hook runs) to stderr; without it only engine.log has it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { actionResults, delta, modelEnv, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


const script = () => [reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }]), reply.text("done")];
const hooksYaml = 'on_iteration_start:\n  command: ["true"]\n';

describe("-v/--verbose", () => {
  it("echoes each model call, tool run and hook run to stderr as [log] lines", async () => {
    server = await serve(script());
    const agent = writeAgent(root, { hooksYaml }, "agent-verbose");
    const ws = join(root, "ws-verbose");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "v-1", "-m", "go", "-v"], { env: modelEnv(server.baseUrl) });

    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/\[log\] model call 1: 2 messages, 2 tools → 1 tool call in \d+ ms/);
    // The journal's window: one message (the task) for the first call, three for the second; a count of one in the singular.
    expect(result.stderr).toMatch(/\[log\] context: .* → 1 message, /);
    expect(result.stderr).toMatch(/\[log\] context: .* → 3 messages, /);
    expect(result.stderr).toMatch(/\[log\] tool echo: \["echo","hi"\] → SUCCESS, exit 0 in \d+ ms/);
    expect(result.stderr).toMatch(/\[log\] \[hook\] on_iteration_start ok \(\d+ ms\)/);
    expect(result.stdout).not.toContain("[log]");
  });

  it("keeps the same lines in engine.log and off stderr without -v", async () => {
    server = await serve(script());
    const agent = writeAgent(root, { hooksYaml }, "agent-quiet");
    const ws = join(root, "ws-quiet");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "q-1", "-m", "go"], { env: modelEnv(server.baseUrl) });

    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toContain("[log]");
    const log = readFileSync(join(runDir(ws, "q-1"), "engine.log"), "utf8");
    expect(log).toMatch(/model call 1: .* in \d+ ms/);
    expect(log).toMatch(/tool echo: \["echo","hi"\] → SUCCESS/);
    expect(log).toMatch(/\[hook\] on_iteration_start ok/);
    expect(Number.isInteger(actionResults(ws, "q-1")[0]?.duration_ms)).toBe(true);
  });
});
