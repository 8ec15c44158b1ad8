// The real `delta` against loopback servers speaking Anthropic Messages and OpenAI Responses: every captured request checked for the protocol's invariants, thinking and reasoning sent back byte for byte, a crash mid-tool continued, recorded runs replayed to the same journal.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { reply, type MockLlm, type Script, type Step } from "../support/mock-llm.js";
import { checkedServer, type NativeProtocol } from "../support/protocol-invariants.js";
import { recordedJson, recordedStep } from "../support/recorded.js";
import { collectFiles, CRASH_TRACE, delta, readEvents, runDir, spawnDelta, waitFor, writeAgent, type DeltaResult, setUpE2e } from "./harness.js";

type Json = Record<string, unknown>;

const e2e = setUpE2e("delta-native-");
const root = e2e.root;
let server: MockLlm | undefined;

const ANTHROPIC_KEY = "sk-ant-e2e-0123456789abcdef";
const OPENAI_KEY = "sk-openai-e2e-0123456789abcdef";
const TOOLS = 'tools:\n  - name: echo\n    exec: "echo ${text}"\n  - name: slow\n    shell: "echo started >> progress.txt; sleep ${seconds}; echo finished >> progress.txt"\n';
const agentYaml = (llm: string, tools = TOOLS, retries = 0) => `name: native\nllm:\n  model: test-model\n  max_retries: ${retries}\n${llm}${tools}`;

interface Run {
  result: DeltaResult;
  json: { status: string; result?: unknown; error?: { type: string; message: string }; metrics: { usage: Record<string, number | null> } };
  ws: string;
}

/** `delta run` (or `continue` of `resume`'s run) in its own workspace against the server now running, with these variables. */
async function run(name: string, yaml: string, env: Record<string, string>, options: { resume?: string; message?: string } = {}): Promise<Run> {
  const agent = writeAgent(root, { agentYaml: yaml }, `agent-${name}`);
  const ws = options.resume ?? join(root, `ws-${name}`);
  const args = options.resume ? ["continue", "--run-id", name, "-w", ws, "--format", "json"] : ["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", options.message ?? "go", "--format", "json"];
  const result = await delta(args, { env: { DELTA_BASE_URL: server!.baseUrl, DELTA_RETRY_BASE_MS: "1", ...env } });
  expect(result.stderr).not.toMatch(CRASH_TRACE);
  if (result.exitCode === 126) throw new Error(result.stderr);
  return { result, json: JSON.parse(result.stdout) as Run["json"], ws };
}

/** Runs `name` until its slow tool has started, kills the engine with SIGKILL there, then continues the run. */
async function killMidToolThenContinue(name: string, yaml: string, key: string): Promise<Run> {
  const agent = writeAgent(root, { agentYaml: yaml }, `agent-${name}`);
  const ws = join(root, `ws-${name}`);
  const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go"], { env: { DELTA_API_KEY: key, DELTA_BASE_URL: server!.baseUrl } });
  await waitFor(() => existsSync(join(ws, "progress.txt")), 15_000, "the slow tool to start");
  child.kill("SIGKILL");
  await child;
  return run(name, yaml, { DELTA_API_KEY: key }, { resume: ws });
}

async function serve(protocol: NativeProtocol | "chat-completions", script: Script): Promise<MockLlm> {
  server = await e2e.serve(script, { protocol });
  return server;
}

const thoughts = (ws: string, runId: string) => readEvents(ws, runId).filter((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");
const recordedContent = (name: string) => (recordedJson(name) as { content: Json[] }).content;
const recordedOutput = (name: string) => (recordedJson(name) as { output: Json[] }).output;

// Anthropic replies, built around real thinking and redacted_thinking blocks (signatures and all) from recorded traffic.
const THINKING = recordedContent("anthropic/thinking-signature-tool-use")[0]!;
const REDACTED = recordedContent("anthropic/redacted-thinking")[0]!;
const toolUse = (id: string, name: string, input: Json) => ({ type: "tool_use", id, name, input });
const message = (content: Json[], stop: string, usage: { input: number; read: number; written: number; output: number }): Json => ({
  id: `msg_${Math.random().toString(36).slice(2)}`,
  type: "message",
  role: "assistant",
  model: "claude-test-model",
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: usage.input, cache_creation_input_tokens: usage.written, cache_read_input_tokens: usage.read, output_tokens: usage.output },
});

// Responses replies, built around real encrypted reasoning items from a recorded four-turn tool loop.
const REASONING = [1, 2, 3].map((turn) => recordedOutput(`openai-responses/tool-loop-turn-${turn}-cache`)[0]!);
const functionCall = (callId: string, name: string, args: Json) => ({ id: `fc_${callId}`, type: "function_call", status: "completed", arguments: JSON.stringify(args), call_id: callId, name });
const messageItem = (text: string, phase: string) => ({ id: `msg_${phase}`, type: "message", status: "completed", content: [{ type: "output_text", annotations: [], logprobs: [], text }], phase, role: "assistant" });
const response = (output: Json[], usage: { input: number; cached: number; output: number; reasoning: number }): Json => ({
  id: `resp_${Math.random().toString(36).slice(2)}`,
  object: "response",
  status: "completed",
  error: null,
  incomplete_details: null,
  model: "gpt-test-model",
  output,
  usage: { input_tokens: usage.input, input_tokens_details: { cached_tokens: usage.cached }, output_tokens: usage.output, output_tokens_details: { reasoning_tokens: usage.reasoning }, total_tokens: usage.input + usage.output },
});

/** The journal without what differs between two processes: times, durations, the ENGINE_START's process facts, and the hash chain that digests them. */
function comparable(events: JournalEvent[]): unknown[] {
  return events
    .filter((event) => event.type !== "ENGINE_START")
    .map((event) => {
      // A replayed THOUGHT was answered by the recording, not by an endpoint: it names none (answered_by).
      const { timestamp: _t, started_at: _s, hash: _h, answered_by: _a, ...rest } = event as JournalEvent & { duration_ms?: number; started_at?: string; hash?: string; answered_by?: unknown };
      return "duration_ms" in rest ? { ...rest, duration_ms: 0 } : rest;
    });
}

describe("Anthropic Messages", () => {
  const yaml = agentYaml(
    "  provider: anthropic\n  thinking: { budget_tokens: 1024 }\n  pricing: { input_per_million: 3, cached_input_per_million: 0.3, cache_write_input_per_million: 3.75, output_per_million: 15 }\n",
  );

  it("a thinking turn with two tool calls, a redacted-thinking turn, an answer: every request valid, thinking back byte for byte, cache reads and writes priced; the key from ANTHROPIC_API_KEY in x-api-key and in no file", async () => {
    const checked = checkedServer("anthropic", [
      message([THINKING, { type: "text", text: "Echoing twice." }, toolUse("toolu_a", "echo", { text: "one" }), toolUse("toolu_b", "echo", { text: "two" })], "tool_use", { input: 120, read: 0, written: 2000, output: 60 }),
      message([REDACTED, toolUse("toolu_c", "echo", { text: "three" })], "tool_use", { input: 40, read: 2000, written: 150, output: 30 }),
      message([{ type: "text", text: "done" }], "end_turn", { input: 20, read: 2150, written: 90, output: 5 }),
    ]);
    await serve("anthropic", checked.script);
    const { result, json, ws } = await run("anthropic-loop", yaml, { ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY }, { message: `go (keys ${ANTHROPIC_KEY} ${OPENAI_KEY})` });
    expect(checked.violations).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(json.result).toBe("done");
    expect(checked.checked()).toBe(3);

    const requests = server!.requests;
    expect(requests.map((request) => [request.path, request.headers["x-api-key"], request.headers["anthropic-version"], request.headers.authorization])).toEqual(
      Array.from({ length: 3 }, () => ["/v1/messages", ANTHROPIC_KEY, "2023-06-01", undefined]),
    );
    expect(requests[0]!.body).toMatchObject({ model: "test-model", max_tokens: 8192 + 1024, thinking: { type: "enabled", budget_tokens: 1024 }, system: [{ type: "text", text: "You are a test agent." }] });

    const [first, second] = thoughts(ws, "anthropic-loop");
    expect(first).toMatchObject({ reasoning: THINKING.thinking, finish_reason: "tool_use", provider_data: { protocol: "anthropic", content: [THINKING, { type: "text" }, { type: "tool_use", id: "toolu_a" }, { type: "tool_use", id: "toolu_b" }] } });
    expect(second!.provider_data).toEqual({ protocol: "anthropic", content: [REDACTED, { type: "tool_use", id: "toolu_c" }] });

    const input = 120 + 2000 + 40 + 2000 + 150 + 20 + 2150 + 90;
    expect(json.metrics.usage).toMatchObject({ input_tokens: input, cached_input_tokens: 2000 + 2150, cache_write_input_tokens: 2000 + 150 + 90, output_tokens: 95 });
    const cost = ((120 + 40 + 20) * 3 + (2000 + 2150) * 0.3 + (2000 + 150 + 90) * 3.75 + 95 * 15) / 1e6;
    expect(json.metrics.usage.total_cost_usd).toBeCloseTo(cost, 12);
    for (const file of collectFiles(runDir(ws, "anthropic-loop"))) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toContain(ANTHROPIC_KEY);
      expect(text, file).not.toContain(OPENAI_KEY);
    }
  });

  it("kill -9 while a tool runs, then continue: the cut call gets its synthesized result and the rebuilt request is valid, its thinking intact", async () => {
    const checked = checkedServer("anthropic", [
      message([THINKING, toolUse("toolu_slow", "slow", { seconds: "30" })], "tool_use", { input: 50, read: 0, written: 0, output: 20 }),
      message([{ type: "text", text: "recovered" }], "end_turn", { input: 60, read: 0, written: 0, output: 5 }),
    ]);
    await serve("anthropic", checked.script);
    const resumed = await killMidToolThenContinue("anthropic-crash", yaml, ANTHROPIC_KEY);
    expect(checked.violations).toEqual([]);
    expect(resumed.result.exitCode).toBe(0);
    expect(resumed.json.result).toBe("recovered");
    const last = server!.requests.at(-1)!.body as { messages: { role: string; content: Json[] }[] };
    expect(last.messages.at(-1)!.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_slow", content: expect.stringContaining("may or may not have taken effect") });
    expect(JSON.stringify(last.messages[1]!.content[0])).toBe(JSON.stringify(THINKING));
  });

  it("recorded replies byte for byte: a thinking tool call, then the answer the recorded server gave to the request carrying that thinking back", async () => {
    const weather = 'tools:\n  - name: weather\n    exec: "echo 40 C in ${location}"\n';
    const checked = checkedServer("anthropic", ["anthropic/thinking-signature-tool-use", "anthropic/thinking-followup"]);
    await serve("anthropic", checked.script);
    const { result, json, ws } = await run("anthropic-recorded", agentYaml("  provider: anthropic\n  thinking: { budget_tokens: 4000 }\n", weather), { DELTA_API_KEY: ANTHROPIC_KEY });
    expect(checked.violations).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(json.result).toMatch(/^The current temperature in Florence, Italy is 40°C/);
    expect(readEvents(ws, "anthropic-recorded").find((event) => event.type === "ACTION_RESULT")).toMatchObject({ observation_content: "40 C in Florence, Italy\n" });
  });

  it("a recorded stream of two tool calls is assembled, and a recorded 529 before the answer is retried", async () => {
    const maths = 'tools:\n  - name: add\n    exec: "echo add ${a} ${b}"\n  - name: multiply\n    exec: "echo multiply ${a} ${b}"\n';
    await serve("anthropic", [recordedStep("anthropic/parallel-tool-use-stream"), recordedStep("anthropic/error-overloaded-529"), recordedStep("anthropic/tool-result-followup")]);
    const { result, json, ws } = await run("anthropic-stream", agentYaml("  provider: anthropic\n  stream: true\n", maths, 1), { DELTA_API_KEY: ANTHROPIC_KEY });
    expect(result.exitCode).toBe(0);
    expect(json.result).toBe("The results are:\n- 2 + 3 = 5\n- 2 × 3 = 6");
    expect(result.stderr).toContain(`model request failed (HTTP 529: "Overloaded" [overloaded_error]); retry 1`);
    expect(readEvents(ws, "anthropic-stream").filter((event) => event.type === "ACTION_RESULT").map((event) => (event as EventOf<"ACTION_RESULT">).observation_content)).toEqual(["add 2 3\n", "multiply 2 3\n"]);
    expect(server!.requests[0]!.body).toMatchObject({ stream: true });
  });

  it("a recorded max_tokens stop ends the run FAILED with MODEL_TRUNCATED; a recorded prompt-too-long with CONTEXT_OVERFLOW", async () => {
    await serve("anthropic", [recordedStep("anthropic/stop-reason-max-tokens")]);
    const truncated = await run("anthropic-truncated", agentYaml("  provider: anthropic\n"), { DELTA_API_KEY: ANTHROPIC_KEY });
    expect(truncated.result.exitCode).toBe(1);
    expect(truncated.json.error).toMatchObject({ type: "MODEL_TRUNCATED", message: expect.stringContaining("finish_reason: max_tokens") });
    await server!.close();
    await serve("anthropic", [recordedStep("anthropic/error-prompt-too-long-400")]);
    const overflow = await run("anthropic-overflow", agentYaml("  provider: anthropic\n"), { DELTA_API_KEY: ANTHROPIC_KEY });
    expect(overflow.result.exitCode).toBe(1);
    expect(overflow.json.error).toMatchObject({ type: "CONTEXT_OVERFLOW", message: expect.stringContaining("3333404 tokens asked of a 200000-token window") });
  });
});

describe("OpenAI Responses", () => {
  const yaml = agentYaml("  reasoning_effort: low\n  pricing: { input_per_million: 1, cached_input_per_million: 0.1, output_per_million: 8 }\n");

  it("chosen by DELTA_PROVIDER: reasoning items, parallel calls, a commentary message, an answer; every request valid, reasoning back byte for byte and in order", async () => {
    const checked = checkedServer("openai-responses", [
      response([REASONING[0]!, functionCall("call_a", "echo", { text: "one" }), functionCall("call_b", "echo", { text: "two" })], { input: 300, cached: 0, output: 90, reasoning: 64 }),
      response([REASONING[1]!, messageItem("Checking once more.", "commentary"), functionCall("call_c", "echo", { text: "three" })], { input: 500, cached: 256, output: 40, reasoning: 0 }),
      response([REASONING[2]!, messageItem("done", "final_answer")], { input: 600, cached: 512, output: 20, reasoning: 8 }),
    ]);
    await serve("openai-responses", checked.script);
    const { result, json, ws } = await run("responses-loop", yaml, { DELTA_PROVIDER: "openai-responses", OPENAI_API_KEY: OPENAI_KEY });
    expect(checked.violations).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(json.result).toBe("done");
    expect(checked.checked()).toBe(3);
    expect(server!.requests.map((request) => [request.path, request.headers.authorization])).toEqual(Array.from({ length: 3 }, () => ["/v1/responses", `Bearer ${OPENAI_KEY}`]));
    expect(server!.requests[0]!.body).toMatchObject({ model: "test-model", reasoning: { effort: "low" }, input: [{ role: "system", content: "You are a test agent." }, { role: "user", content: "go" }] });
    const [first, second] = thoughts(ws, "responses-loop");
    expect(first!.provider_data).toEqual({ protocol: "openai-responses", output: [REASONING[0], { type: "function_call", call_id: "call_a" }, { type: "function_call", call_id: "call_b" }] });
    expect(second).toMatchObject({ content: "Checking once more.", provider_data: { output: [REASONING[1], { type: "message", phase: "commentary" }, { type: "function_call", call_id: "call_c" }] } });
    const third = (server!.requests[2]!.body as { input: Json[] }).input;
    expect(third.find((item) => item.type === "message")).toEqual({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking once more." }], phase: "commentary" });
    expect(json.metrics.usage).toMatchObject({ input_tokens: 1400, cached_input_tokens: 768, output_tokens: 150, reasoning_tokens: 72 });
    expect(json.metrics.usage.total_cost_usd).toBeCloseTo(((1400 - 768) * 1 + 768 * 0.1 + 150 * 8) / 1e6, 12);
  });

  it("kill -9 while a tool runs, then continue: the rebuilt request answers every call and carries the reasoning item", async () => {
    const checked = checkedServer("openai-responses", [
      response([REASONING[0]!, functionCall("call_slow", "slow", { seconds: "30" })], { input: 50, cached: 0, output: 20, reasoning: 10 }),
      response([messageItem("recovered", "final_answer")], { input: 60, cached: 0, output: 5, reasoning: 0 }),
    ]);
    await serve("openai-responses", checked.script);
    const resumed = await killMidToolThenContinue("responses-crash", agentYaml("  provider: openai-responses\n"), OPENAI_KEY);
    expect(checked.violations).toEqual([]);
    expect(resumed.result.exitCode).toBe(0);
    const input = (server!.requests.at(-1)!.body as { input: Json[] }).input;
    expect(input.at(-1)).toMatchObject({ type: "function_call_output", call_id: "call_slow", output: expect.stringContaining("may or may not have taken effect") });
  });

  it("recorded replies byte for byte: encrypted reasoning and a call, then the recorded server's answer to the request that sent them back", async () => {
    const tools = 'tools:\n  - name: lookup_population\n    exec: "echo 123124 in ${country}"\n  - name: can_have_dragons\n    exec: "echo yes for ${population}"\n';
    const checked = checkedServer("openai-responses", [
      "openai-responses/encrypted-reasoning-function-calls",
      "openai-responses/encrypted-reasoning-function-calls-followup",
      response([messageItem("Pundora can have dragons.", "final_answer")], { input: 250, cached: 0, output: 9, reasoning: 0 }),
    ]);
    await serve("openai-responses", checked.script);
    const { result, json } = await run("responses-recorded", agentYaml("  provider: openai-responses\n", tools), { DELTA_API_KEY: OPENAI_KEY });
    expect(checked.violations).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(json.result).toBe("Pundora can have dragons.");
    expect(json.metrics.usage).toMatchObject({ input_tokens: 94 + 192 + 250, reasoning_tokens: 63 });
  });

  it("a recorded refusal ends the run MODEL_REFUSED and a recorded incomplete response MODEL_TRUNCATED, exit 1", async () => {
    await serve("openai-responses", [recordedStep("openai-responses/refusal-content")]);
    const refused = await run("responses-refused", agentYaml("  provider: openai-responses\n"), { DELTA_API_KEY: OPENAI_KEY });
    expect(refused.result.exitCode).toBe(1);
    expect(refused.json.error?.type).toBe("MODEL_REFUSED");
    await server!.close();
    await serve("openai-responses", [recordedStep("openai-responses/incomplete-max-output-tokens-stream")]);
    const cut = await run("responses-cut", agentYaml("  provider: openai-responses\n  stream: true\n"), { DELTA_API_KEY: OPENAI_KEY });
    expect(cut.result.exitCode).toBe(1);
    expect(cut.json.error).toMatchObject({ type: "MODEL_TRUNCATED", message: expect.stringContaining("max_output_tokens") });
  });
});

describe("replay of a native provider's run", () => {
  for (const protocol of ["anthropic", "openai-responses"] as const) {
    it(`a recorded ${protocol} run replays from its io/invocations/ to the same journal, with no server and no key`, async () => {
      const replies: (Json | Step)[] =
        protocol === "anthropic"
          ? [message([THINKING, toolUse("toolu_r1", "echo", { text: "r" })], "tool_use", { input: 10, read: 0, written: 5, output: 3 }), message([{ type: "text", text: "replayed" }], "end_turn", { input: 12, read: 5, written: 0, output: 2 })]
          : [response([REASONING[0]!, functionCall("call_r1", "echo", { text: "r" })], { input: 10, cached: 0, output: 3, reasoning: 2 }), response([messageItem("replayed", "final_answer")], { input: 12, cached: 0, output: 2, reasoning: 0 })];
      const checked = checkedServer(protocol, replies);
      await serve(protocol, checked.script);
      const yaml = agentYaml(`  provider: ${protocol}\n`);
      const original = await run(`${protocol}-original`, yaml, { DELTA_API_KEY: ANTHROPIC_KEY });
      expect(original.result.exitCode).toBe(0);
      const agent = join(root, `agent-${protocol}-original`);
      const ws = join(root, `ws-${protocol}-replayed`);
      const again = await delta(["run", "--agent", agent, "-w", ws, "--run-id", `${protocol}-original`, "-m", "go", "--format", "json", "--replay", runDir(original.ws, `${protocol}-original`)], { env: {} });
      expect(again.exitCode).toBe(0);
      expect(comparable(readEvents(ws, `${protocol}-original`))).toEqual(comparable(readEvents(original.ws, `${protocol}-original`)));
      expect(thoughts(ws, `${protocol}-original`)[0]!.provider_data?.protocol).toBe(protocol);
    });
  }
});

describe("choosing a provider", () => {
  it("refuses (126) a setting the provider does not take, an unknown DELTA_PROVIDER, and a missing key, each naming the fix", async () => {
    await serve("chat-completions", [reply.text("never")]);
    const agent = writeAgent(root, { agentYaml: agentYaml("  provider: anthropic\n  seed: 7\n") }, "agent-refusals");
    const seed = await delta(["run", "--agent", agent, "-y", "-m", "go", "--format", "json"], { env: { DELTA_API_KEY: ANTHROPIC_KEY } });
    expect(seed.exitCode).toBe(126);
    expect(JSON.parse(seed.stdout).error.message).toMatch(/agent\.yaml: llm\.seed is not a setting of the anthropic provider \(llm\.provider in agent\.yaml\): the Messages API has no seed/);
    const plain = writeAgent(root, { agentYaml: agentYaml("") }, "agent-plain");
    const bogus = await delta(["run", "--agent", plain, "-y", "-m", "go", "--format", "json"], { env: { DELTA_API_KEY: ANTHROPIC_KEY, DELTA_PROVIDER: "claude" } });
    expect(bogus.exitCode).toBe(126);
    expect(JSON.parse(bogus.stdout).error.message).toBe('DELTA_PROVIDER from the environment is "claude", which is not a provider; use one of openai, anthropic, openai-responses.');
    const keyless = await delta(["run", "--agent", plain, "-y", "-m", "go", "--format", "json"], { env: { DELTA_PROVIDER: "anthropic", OPENAI_API_KEY: OPENAI_KEY } });
    expect(keyless.exitCode).toBe(126);
    expect(JSON.parse(keyless.stdout).error).toMatchObject({ type: "MISSING_API_KEY", message: expect.stringContaining("No API key found for the anthropic provider. Set DELTA_API_KEY (or ANTHROPIC_API_KEY)") });
    expect(server!.requests).toHaveLength(0);
  });
});
