// End to end: the real `delta run` against a scripted model on 127.0.0.1.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fault, reply, type MockLlm } from "../support/mock-llm.js";
import { actionResults, collectFiles, delta, eventTypes, listIo, modelEnv, readEvents, readMetadataFile, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


function workspace(name: string): string {
  return join(root, name);
}

describe("delta run", () => {
  it("runs a tool call, feeds its result to the second request and completes with the final text", async () => {
    server = await serve([reply.toolCalls([{ name: "echo", arguments: { text: "hello from tool" } }]), reply.text("all done")]);
    const agent = writeAgent(root, {}, "agent-basic");
    const ws = workspace("ws-basic");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "basic-1", "-m", "say hello", "--format", "json"], { env: modelEnv(server.baseUrl) });

    expect(result.exitCode).toBe(0);
    const runResult = JSON.parse(result.stdout);
    expect(runResult).toMatchObject({ schema_version: "2.0", run_id: "basic-1", status: "COMPLETED", result: "all done" });
    expect(runResult.metrics.iterations).toBe(2);
    expect(runResult.metrics.usage.input_tokens).toBeGreaterThan(0);
    expect(runResult.metrics.usage.total_cost_usd).toBeNull();
    expect(runResult.metadata).toEqual({ agent_name: "test-agent", workspace_path: ws });

    const second = server.requests[1]!.body as { messages: Array<{ role: string; content: string | null; tool_call_id?: string }> };
    const toolMessage = second.messages.find((message) => message.role === "tool");
    expect(toolMessage?.content).toContain("hello from tool");
    expect(second.messages[0]).toEqual({ role: "system", content: "You are a test agent." });
    expect(second.messages.find((m) => m.role === "user")?.content).toBe("say hello");

    const events = readEvents(ws, "basic-1");
    expect(eventTypes(events)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "THOUGHT", "ENGINE_END"]);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const request = events[3]!;
    expect(request.type === "ACTION_REQUEST" && request.resolved_command).toEqual(["echo", "hello from tool"]);
    expect(readMetadataFile(ws, "basic-1")).toMatchObject({ status: "COMPLETED", iterations: 2, run_id: "basic-1", pid: expect.any(Number), hostname: expect.any(String) });
    expect(listIo(ws, "basic-1", "invocations")).toHaveLength(2);
    expect(listIo(ws, "basic-1", "tool_executions")).toHaveLength(1);
    expect(readFileSync(join(ws, ".delta", "VERSION"), "utf8").trim()).toBe("1");
  });

  it("never writes the API key into the run's files or its progress, even when the message, the model and a tool repeat it", async () => {
    server = await serve([reply.toolCalls([{ name: "echo", arguments: { text: "key=sk-test-secret-key-123" } }]), reply.text("ok")]);
    const agent = writeAgent(root, {}, "agent-secret");
    const ws = workspace("ws-secret");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "secret-1", "-m", "go; the key is sk-test-secret-key-123"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain("key=[REDACTED]");
    expect(result.stderr).not.toContain("sk-test-secret-key-123");
    const files = collectFiles(runDir(ws, "secret-1"));
    expect(files.length).toBeGreaterThan(4);
    for (const file of files) expect(readFileSync(file, "utf8")).not.toContain("sk-test-secret-key-123");
    expect(actionResults(ws, "secret-1")[0]).toMatchObject({ observation_content: expect.stringContaining("key=[REDACTED]") });
  });

  it("never loads undici, Node's fetch internals: the SDK meets the engine's Headers, FormData and responses, through a retried 429 too", async () => {
    server = await serve([fault.status(429, { retryAfterMs: 1 }), reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }]), reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-no-undici");
    const ws = workspace("ws-no-undici");
    const probe = join(root, "undici-probe.cjs");
    const report = join(root, "undici-report.json");
    writeFileSync(probe, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList.filter((name) => name.includes("undici")))));\n`);
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "no-undici", "-m", "go"], { env: modelEnv(server.baseUrl, { NODE_OPTIONS: `--require ${probe}` }) });
    expect(result.exitCode).toBe(0);
    expect(server.requests).toHaveLength(3);
    expect(JSON.parse(readFileSync(report, "utf8"))).toEqual([]);
  });

  it("never prints or writes the API key when the model server echoes it in its errors, through a retry and a refusal", async () => {
    const echo = "bad key sk-test-secret-key-123";
    server = await serve([fault.status(500, { message: echo }), fault.status(403, { message: echo })]);
    const agent = writeAgent(root, {}, "agent-secret-echo");
    const ws = workspace("ws-secret-echo");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "secret-echo", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(1);
    expect(server.requests).toHaveLength(2);
    expect(result.stderr).toContain("bad key [REDACTED]");
    expect(JSON.parse(result.stdout).error.message).toContain("bad key [REDACTED]");
    expect(result.stdout + result.stderr).not.toContain("sk-test-secret-key-123");
    for (const file of collectFiles(runDir(ws, "secret-echo"))) expect(readFileSync(file, "utf8")).not.toContain("sk-test-secret-key-123");
  });

  it("runs normally with a one-letter key (as local servers accept): short keys are not redacted into field names", async () => {
    server = await serve([reply.toolCalls([{ name: "echo", arguments: { text: "x marks" } }]), reply.text("ok")]);
    const agent = writeAgent(root, {}, "agent-short-key");
    const ws = workspace("ws-short-key");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "short-1", "-m", "go"], { env: modelEnv(server.baseUrl, { DELTA_API_KEY: "x" }) });
    expect(result.exitCode).toBe(0);
    expect(actionResults(ws, "short-1")[0]).toMatchObject({ status: "SUCCESS", observation_content: expect.stringContaining("x marks"), exit_code: 0 });
  });

  it("puts DELTA.md and a computed_file's output into the context", async () => {
    server = await serve([reply.text("fine")]);
    const agent = writeAgent(root, {
      contextYaml: `sources:
  - type: file
    path: '\${AGENT_HOME}/system_prompt.md'
  - type: file
    id: guide
    path: '\${CWD}/DELTA.md'
    on_missing: skip
  - type: computed_file
    id: summary
    generator:
      command: ["sh", "-c", "mkdir -p out && echo \\"computed for $DELTA_RUN_ID\\" > out/summary.md"]
    output_path: '\${CWD}/out/summary.md'
  - type: journal
`,
    }, "agent-context");
    const ws = workspace("ws-context");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "ctx-0", "-m", "warm up"], { env: modelEnv(server.baseUrl) });
    writeFileSync(join(ws, "DELTA.md"), "Workspace rule: always be brief.");
    server.push(reply.text("fine again"));
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "ctx-1", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(0);
    const first = JSON.stringify(server.requests[0]!.body);
    const second = JSON.stringify(server.requests[1]!.body);
    expect(first).not.toContain("Workspace rule");
    expect(second).toContain("Workspace rule: always be brief.");
    expect(second).toContain("computed for ctx-1");
  });

  it("retries 429 and 500 and still completes", async () => {
    server = await serve([fault.status(429, { retryAfter: "0" }), fault.status(500), reply.text("after faults")]);
    const agent = writeAgent(root, {}, "agent-retry");
    const ws = workspace("ws-retry");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "retry-1", "-m", "go", "--format", "raw"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("after faults\n");
    expect(server.requests).toHaveLength(3);
  });

  it("fails with LLM_ERROR and exit 1 when the model keeps failing, and stays resumable", async () => {
    server = await serve([fault.status(500), fault.status(500), fault.status(500), fault.status(500)]);
    const agent = writeAgent(root, {}, "agent-llm-fail");
    const ws = workspace("ws-llm-fail");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "fail-1", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(1);
    const runResult = JSON.parse(result.stdout);
    expect(runResult.status).toBe("FAILED");
    expect(runResult.error.type).toBe("LLM_ERROR");
    expect(readMetadataFile(ws, "fail-1").status).toBe("FAILED");
    expect(eventTypes(readEvents(ws, "fail-1")).slice(-2)).toEqual(["ERROR", "ENGINE_END"]);
  });

  it("stops at --max-iterations with FAILED, MAX_ITERATIONS and exit 1", async () => {
    server = await serve((_request, index) => reply.toolCalls([{ name: "echo", arguments: { text: `n${index}` } }]));
    const agent = writeAgent(root, {}, "agent-max");
    const ws = workspace("ws-max");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "max-1", "-m", "loop", "--max-iterations", "3", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(1);
    const runResult = JSON.parse(result.stdout);
    expect(runResult.error.type).toBe("MAX_ITERATIONS");
    expect(runResult.metrics.iterations).toBe(3);
    expect(server.requests).toHaveLength(3);
    // The command that gives it more is on stderr once, in the resume hint, not again inside the error.
    const text = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "max-2", "-m", "loop", "--max-iterations", "1"], { env: modelEnv(server.baseUrl) });
    expect(text.exitCode).toBe(1);
    expect(text.stderr.split("delta continue --run-id max-2").length - 1, text.stderr).toBe(1);
  });

  it("parses a JSON final answer into result", async () => {
    server = await serve([reply.text('{"summary": "ok", "count": 2}')]);
    const agent = writeAgent(root, {}, "agent-json");
    const result = await delta(["run", "--agent", agent, "-w", workspace("ws-json"), "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(JSON.parse(result.stdout).result).toEqual({ summary: "ok", count: 2 });
  });

  it("computes total_cost_usd from llm.pricing", async () => {
    server = await serve([reply.text("priced")]);
    const agent = writeAgent(root, { agentYaml: "name: priced\nllm:\n  model: m\n  pricing:\n    input_per_million: 1000000\n    output_per_million: 2000000\n" }, "agent-priced");
    const result = await delta(["run", "--agent", agent, "-w", workspace("ws-priced"), "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    const usage = JSON.parse(result.stdout).metrics.usage;
    expect(usage.total_cost_usd).toBeCloseTo(usage.input_tokens * 1 + usage.output_tokens * 2, 6);
  });

  it("passes a hostile argument to exec: and shell: tools as one literal value", async () => {
    const hostile = `"; touch pwned-exec; echo " $(touch pwned-sub) \`touch pwned-tick\` | touch pwned-pipe`;
    server = await serve([
      reply.toolCalls([{ name: "echo", arguments: { text: hostile } }, { name: "shout", arguments: { text: hostile } }]),
      reply.text("done"),
    ]);
    const agent = writeAgent(root, { tools: 'tools:\n  - name: echo\n    exec: "printf %s ${text}"\n  - name: shout\n    shell: "printf %s ${text} | cat"\n' }, "agent-hostile");
    const ws = workspace("ws-hostile");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "hostile-1", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(0);
    const observations = actionResults(ws, "hostile-1").map((event) => event.observation_content);
    expect(observations).toEqual([hostile, hostile]);
    expect(readdirSync(ws).filter((name) => name.startsWith("pwned"))).toEqual([]);
  });

  it("refuses a duplicate run id with 126 and one JSON RunResult, leaving the first run intact", async () => {
    server = await serve([reply.text("first")]);
    const agent = writeAgent(root, {}, "agent-dup");
    const ws = workspace("ws-dup");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "dup", "-m", "go"], { env: modelEnv(server.baseUrl) });
    const before = readFileSync(join(runDir(ws, "dup"), "journal.jsonl"), "utf8");
    const again = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "dup", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(again.exitCode).toBe(126);
    const runResult = JSON.parse(again.stdout);
    expect(runResult).toMatchObject({ schema_version: "2.0", status: "REFUSED", run_id: null, error: { type: "RUN_REFUSED" } });
    expect(runResult.error.message).toContain("already exists");
    expect(readFileSync(join(runDir(ws, "dup"), "journal.jsonl"), "utf8")).toBe(before);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [["--run-id", "../escape"], "RUN_REFUSED"],
    [["--run-id", ".hidden"], "RUN_REFUSED"],
    [["--max-iterations", "zero"], "USAGE_ERROR"],
    [["--format", "xml"], "USAGE_ERROR"],
    [["--no-such-flag"], "USAGE_ERROR"],
  ])("refuses bad flags %j with 126 and a JSON error", async (extra, type) => {
    const agent = writeAgent(root, {}, "agent-flags");
    const result = await delta(["run", "--agent", agent, "-w", workspace("ws-flags"), "-m", "go", "--format", "json", ...extra], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(result.exitCode).toBe(126);
    if (extra[0] !== "--format") expect(JSON.parse(result.stdout).error.type).toBe(type);
    expect(existsSync(join(workspace("ws-flags"), ".delta", "..", "escape"))).toBe(false);
  });

  it("refuses to start without an API key (126) and creates no run", async () => {
    const agent = writeAgent(root, {}, "agent-nokey");
    const ws = workspace("ws-nokey");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "nokey", "-m", "go", "--format", "json"]);
    expect(result.exitCode).toBe(126);
    expect(JSON.parse(result.stdout).error.type).toBe("MISSING_API_KEY");
    expect(existsSync(runDir(ws, "nokey"))).toBe(false);
  });

  it("keeps a numeric-looking run id and message exactly as typed", async () => {
    server = await serve([reply.text("ok")]);
    const agent = writeAgent(root, {}, "agent-numeric");
    const ws = workspace("ws-numeric");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "007", "-m", "1e3", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(JSON.parse(result.stdout).run_id).toBe("007");
    expect(readEvents(ws, "007").find((event) => event.type === "USER_MESSAGE")).toMatchObject({ content: "1e3" });
  });
});

