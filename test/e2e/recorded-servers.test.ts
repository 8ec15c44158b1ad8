// The real `delta` against real recorded replies of real model servers, replayed byte for byte: reasoning echoed, truncation and refusal never exit 0, the server's words shown, usage and cost exact.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { messagesOf, reply, startMockLlm, type RecordedRequest, type Script, type Step } from "../support/mock-llm.js";
import { recordedJson, recordedStep } from "../support/recorded.js";
import { actionResults, CRASH_TRACE, delta, modelEnv, readEvents, readMetadataFile, writeAgent, type DeltaResult, setUpE2e } from "./harness.js";

interface RunResultJson {
  status: string;
  result?: unknown;
  error?: { type: string; message: string };
  deferred?: { reason: string; resume_after: string | null; message: string };
  metrics: { usage: { input_tokens: number; cached_input_tokens: number; output_tokens: number; reasoning_tokens: number; total_cost_usd: number | null } };
}

const { root } = setUpE2e("delta-recorded-");

const agentYaml = (llm: string, tools: string, retries = 0) => `name: recorded\nllm:\n  model: recorded-model\n  max_retries: ${retries}\n${llm}tools:\n${tools}`;
const tool = (name: string, exec: string) => `  - name: ${name}\n    exec: "${exec}"\n`;

interface Run {
  result: DeltaResult;
  json: RunResultJson;
  ws: string;
  requests: RecordedRequest[];
}

/** `delta run` (or `continue` when `resume` names an earlier run's workspace) against a server playing `script`. */
async function run(name: string, script: Script, yaml: string, options: { resume?: string; verbose?: boolean } = {}): Promise<Run> {
  const server = await startMockLlm(script);
  const agent = writeAgent(root, { agentYaml: yaml }, `agent-${name}`);
  const ws = options.resume ?? join(root, `ws-${name}`);
  const args = options.resume
    ? ["continue", "--run-id", name, "-w", ws, "--format", "json"]
    : ["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go", "--format", "json", ...(options.verbose ? ["-v"] : [])];
  try {
    const result = await delta(args, { env: modelEnv(server.baseUrl) });
    expect(result.stderr).not.toMatch(CRASH_TRACE);
    if (result.exitCode === 126) throw new Error(result.stderr);
    return { result, json: JSON.parse(result.stdout) as RunResultJson, ws, requests: server.requests };
  } finally {
    await server.close();
  }
}

type WireAssistant = { role: string; content: unknown; tool_calls?: { id: string }[] } & Record<string, unknown>;
const assistantsWithCalls = (request: RecordedRequest) => (messagesOf(request) as unknown as WireAssistant[]).filter((m) => m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0);
const recordedMessage = (name: string) => (recordedJson(name) as { choices: { message: Record<string, unknown> }[] }).choices[0]!.message;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const thoughts = (ws: string, runId: string) => readEvents(ws, runId).filter((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");

/**
 * As DeepSeek in thinking mode does: a request whose assistant tool-call turn lacks the
 * reasoning_content that turn came with is refused (the refusal body is this test server's own).
 */
function requireReasoningBack(expected: string, then: Step[]): (request: RecordedRequest, index: number) => Step {
  return (request: RecordedRequest, index: number): Step => {
    if (!assistantsWithCalls(request).every((m) => m.reasoning_content === expected)) {
      return reply.raw(400, { error: { message: "test server: the assistant message with tool_calls lacks its reasoning_content", type: "invalid_request_error" } });
    }
    return then[index] ?? reply.raw(500, { error: { message: "test server: no more replies" } });
  };
}

describe("reasoning a provider needs back", () => {
  const deepseekReasoning = recordedMessage("deepseek/reasoner-tool-call").reasoning_content as string;

  it("the test server's gate refuses a request without the reasoning (so passing it means the engine sent it)", () => {
    const gate = requireReasoningBack(deepseekReasoning, [reply.text("a"), reply.text("b")]);
    const without = { body: { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c" }] }] } } as unknown as RecordedRequest;
    expect(gate(without, 0)).toMatchObject({ kind: "raw", status: 400 });
    expect(gate({ body: { messages: [{ role: "assistant", content: null, reasoning_content: deepseekReasoning, tool_calls: [{ id: "c" }] }] } } as unknown as RecordedRequest, 0)).toMatchObject({ kind: "reply" });
  });

  it("DeepSeek: reasoning_content is journaled, survives a failed run and `continue` in a new process, goes back exactly; the tool runs once; text, usage and cost are exact", async () => {
    const yaml = agentYaml("  pricing: { input_per_million: 0.28, cached_input_per_million: 0.028, output_per_million: 0.42 }\n", tool("load_capability", "echo loaded ${id}"));
    const first = await run("deepseek", [recordedStep("deepseek/reasoner-tool-call"), reply.raw(500, { error: { message: "busy" } })], yaml, { verbose: true });
    expect(first.result.exitCode).toBe(1);
    expect(first.result.stderr).toMatch(/\[log\] \[1\] REASONING: The user wants to play a dice game\./);
    expect(first.result.stdout).not.toContain("The user wants to play a dice game");
    const [thought] = thoughts(first.ws, "deepseek");
    expect(thought).toMatchObject({ reasoning: deepseekReasoning, finish_reason: "tool_calls", provider_data: { protocol: "chat-completions", reasoning_field: "reasoning_content" } });

    const resumed = await run("deepseek", requireReasoningBack(deepseekReasoning, [recordedStep("deepseek/reasoner-final-answer")]), yaml, { resume: first.ws });
    expect(resumed.result.exitCode).toBe(0);
    expect(resumed.json.result).toBe(recordedMessage("deepseek/reasoner-final-answer").content);
    expect(assistantsWithCalls(resumed.requests[0]!)[0]).toMatchObject({ reasoning_content: deepseekReasoning, content: "Let me load the dice rolling capability!" });
    expect(actionResults(first.ws, "deepseek").map((result) => result.observation_content)).toEqual(["loaded DICE_ROLL\n"]);
    expect(resumed.json.metrics.usage).toMatchObject({ input_tokens: 563 + 976, cached_input_tokens: 512 + 896, output_tokens: 116 + 61, reasoning_tokens: 60 + 25 });
    const cost = ((563 + 976 - 512 - 896) * 0.28 + (512 + 896) * 0.028 + (116 + 61) * 0.42) / 1e6;
    expect(resumed.json.metrics.usage.total_cost_usd).toBeCloseTo(cost, 12);
    expect(readMetadataFile(first.ws, "deepseek").usage).toEqual({ input_tokens: 1539, cached_input_tokens: 1408, cache_write_input_tokens: 0, output_tokens: 177, reasoning_tokens: 85, total_cost_usd: resumed.json.metrics.usage.total_cost_usd });
  });

  it("Gemini: the thought signature goes back on the assistant message exactly as it came; thinking counted only in total_tokens is output", async () => {
    const signed = recordedMessage("gemini-openai/tool-call-thought-signature");
    const gate: Script = (request, index) => {
      if (index === 0) return recordedStep("gemini-openai/tool-call-thought-signature");
      const [assistant] = assistantsWithCalls(request);
      const exact = JSON.stringify(assistant?.extra_content) === JSON.stringify(signed.extra_content) && assistant?.thought_signature === signed.thought_signature;
      return exact ? recordedStep("gemini-openai/text-after-tool-thought-signature") : reply.raw(400, { error: { message: "test server: thought_signature missing" } });
    };
    const { result, json } = await run("gemini", gate, agentYaml("", tool("get_current_time", "date")));
    expect(result.exitCode).toBe(0);
    expect(json.result).toBe("The current time is Noon.");
    expect(json.metrics.usage).toMatchObject({ input_tokens: 35 + 66, output_tokens: 12 + 62 + 6 + 28, reasoning_tokens: 62 + 28 });
  });

  it("Mistral Magistral: thinking parts are the reasoning, the text part is the result, and stdout has no thinking", async () => {
    const { result, json, ws } = await run("magistral", [recordedStep("mistral/magistral-thinking-content-parts")], agentYaml("", tool("echo", "echo ${text}")));
    const parts = recordedMessage("mistral/magistral-thinking-content-parts").content as { type: string; text?: string }[];
    expect(result.exitCode).toBe(0);
    expect(json.result).toBe(parts.find((part) => part.type === "text")!.text);
    expect(result.stdout).not.toContain("Analogizing crossing a river");
    expect(thoughts(ws, "magistral")[0]!.reasoning).toMatch(/^\*\*Analogizing crossing a river\*\*/);
  });

  it("TGI 2.0: an integer tool call id pairs the call with its result", async () => {
    const { result, json, ws, requests } = await run("tgi", [recordedStep("tgi/v2.0.1-tool-call-integer-id"), recordedStep("openai-chat/tool-result-followup")], agentYaml("", tool("get_current_weather", "echo ${location} ${format}")));
    expect(result.exitCode).toBe(0);
    expect(json.result).toBe(recordedMessage("openai-chat/tool-result-followup").content);
    expect(actionResults(ws, "tgi")).toMatchObject([{ action_id: "0", status: "SUCCESS", observation_content: "Brooklyn celsius\n" }]);
    expect(messagesOf(requests[1]!).at(-1)).toMatchObject({ role: "tool", tool_call_id: "0", content: "Brooklyn celsius\n" });
  });
});

describe("replies the model did not finish", () => {
  it("a reply cut off at the token limit is FAILED with MODEL_TRUNCATED (exit 1), and continue asks again without the cut-off text", async () => {
    const yaml = agentYaml("  max_tokens: 50\n", tool("echo", "echo ${text}"));
    const first = await run("truncated", [recordedStep("openai-chat/finish-length")], yaml);
    expect(first.result.exitCode).toBe(1);
    expect(first.json).toMatchObject({ status: "FAILED", error: { type: "MODEL_TRUNCATED" } });
    expect(first.json.error!.message).toMatch(/cut off at its token limit \(finish_reason: length\).*raise llm\.max_tokens in agent\.yaml \(now 50\)/);
    expect(first.result.stderr).toMatch(/MODEL_TRUNCATED: The model's reply was cut off/);
    const resumed = await run("truncated", [recordedStep("openai-chat/tool-result-followup")], yaml, { resume: first.ws });
    expect(resumed.result.exitCode).toBe(0);
    expect(messagesOf(resumed.requests[0]!).map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("a streamed reply cut off at the token limit never exits 0", async () => {
    const { result, json } = await run("truncated-stream", [recordedStep("openai-chat/finish-length-stream")], agentYaml("  stream: true\n", tool("echo", "echo ${text}")));
    expect(result.exitCode).toBe(1);
    expect(json.error?.type).toBe("MODEL_TRUNCATED");
  });

  it("an OpenAI refusal is FAILED with MODEL_REFUSED, quoting it", async () => {
    const { result, json } = await run("refusal", [recordedStep("openai-chat/refusal-field")], agentYaml("", tool("echo", "echo ${text}")));
    expect(result.exitCode).toBe(1);
    expect(json.error?.type).toBe("MODEL_REFUSED");
    expect(json.error?.message).toMatch(/finish_reason: refusal/);
  });

});

describe("the server's reason, shown", () => {
  // requests: 2 where an unusable reply is asked for once more (llm.max_retries is 3 there).
  const cases: { name: string; steps: Step[]; words: RegExp; type?: string; requests?: number; label: string }[] = [
    { label: "OpenAI's error envelope (recorded)", name: "openai-404", steps: [recordedStep("openai-chat/error-model-not-found-404")], words: /does not exist or you do not have access to it.*Check the model name/ },
    { label: "Groq's tool_use_failed, asked once more (recorded)", name: "groq-tool", steps: [recordedStep("groq/error-tool-use-failed-400"), recordedStep("groq/error-tool-use-failed-400")], words: /Tool call validation failed.*The model wrote a tool call the server could not accept/, requests: 2 },
    { label: "Gemini's native error (recorded)", name: "gemini-400", steps: [recordedStep("gemini/error-api-key-invalid-400")], words: /API key not valid\. Please pass a valid API key\./ },
    { label: "Mistral's {object: error}, the shape vLLM sends too (recorded)", name: "object-error", steps: [recordedStep("mistral/error-message-order-400")], words: new RegExp(escape(String((recordedJson("mistral/error-message-order-400") as { message: string }).message).slice(0, 40))) },
    { label: "Gemini's error array (mock-built)", name: "gemini-array", steps: [reply.raw(400, [{ error: { code: 400, message: "Invalid value at 'tools[0]'", status: "INVALID_ARGUMENT" } }])], words: /Invalid value at 'tools\[0\]'/ },
    { label: "Ollama's {error: text} (recorded)", name: "error-text", steps: [recordedStep("ollama/native-error-does-not-support-tools-400")], words: new RegExp(escape((recordedJson("ollama/native-error-does-not-support-tools-400") as { error: string }).error)) },
    { label: "an HTTP 200 carrying an error (mock-built)", name: "error-200", steps: [reply.raw(200, { error: { message: "upstream hiccup" } }), reply.raw(200, { error: { message: "upstream hiccup" } })], words: /an error in place of a reply: "upstream hiccup"/, requests: 2 },
    {
      label: "DeepSeek's context-length overflow, as CONTEXT_OVERFLOW (recorded)",
      name: "overflow",
      steps: [recordedStep("deepseek/error-context-length-400")],
      words: /context window \(1250025 tokens asked of a 1048565-token window\).*maximum context length is 1048565 tokens/,
      type: "CONTEXT_OVERFLOW",
    },
    { label: "Azure's prompt filter, as MODEL_REFUSED (recorded)", name: "prompt-filter", steps: [recordedStep("azure/error-content-filter-400")], words: /content filter refused the request.*content management policy/, type: "MODEL_REFUSED" },
  ];
  for (const { label, name, steps, words, type, requests } of cases) {
    it(`${label}: its words are in stderr and in error.message, exit 1`, async () => {
      const { result, json, requests: sent } = await run(name, steps, agentYaml("", tool("echo", "echo ${text}"), requests === 2 ? 3 : 0));
      expect(result.exitCode).toBe(1);
      expect(json.error?.type).toBe(type ?? "LLM_ERROR");
      expect(json.error?.message).toMatch(words);
      expect(result.stderr).toMatch(words);
      expect(sent).toHaveLength(requests ?? 1);
    });
  }

  it("OpenRouter's error.metadata.raw (recorded), a 429 still there after the retries: its words are in stderr and in deferred.message, exit 75 RATE_LIMITED", async () => {
    const words = /Provider returned error \(Google: google\/gemini-2\.0-flash-exp:free is temporarily rate-limited upstream/;
    const { result, json, requests: sent } = await run("openrouter-429", [recordedStep("openrouter/error-429-metadata-raw")], agentYaml("", tool("echo", "echo ${text}"), 0));
    expect(result.exitCode).toBe(75);
    expect(json.error).toBeUndefined();
    expect(json.deferred?.reason).toBe("RATE_LIMITED");
    expect(json.deferred?.message).toMatch(words);
    expect(result.stderr).toMatch(words);
    expect(sent).toHaveLength(1);
  });
});

describe("usage and cost", () => {
  it("prices cached prompt tokens at llm.pricing.cached_input_per_million", async () => {
    const yaml = agentYaml("  pricing: { input_per_million: 2.5, cached_input_per_million: 0.25, output_per_million: 10 }\n", tool("echo", "echo ${text}"));
    const { json } = await run("cached", [recordedStep("openai-chat/usage-cached-tokens")], yaml);
    expect(json.metrics.usage).toMatchObject({ input_tokens: 4020, cached_input_tokens: 4012, output_tokens: 4, reasoning_tokens: 0 });
    expect(json.metrics.usage.total_cost_usd).toBeCloseTo((8 * 2.5 + 4012 * 0.25 + 4 * 10) / 1e6, 12);
  });

  it("takes the provider's own cost when it reports one, with no llm.pricing", async () => {
    const { json } = await run("provider-cost", [recordedStep("openrouter/usage-cost")], agentYaml("", tool("echo", "echo ${text}")));
    expect(json.metrics.usage.total_cost_usd).toBe(0.000102);
  });
});

describe("streaming (llm.stream: true)", () => {
  it("runs the recorded streamed tool calls, then reads a JSON reply to a stream request; one connection serves the run", async () => {
    const server = await startMockLlm([recordedStep("openai-chat/parallel-tool-calls-stream-include-usage"), recordedStep("openai-chat/tool-result-followup")]);
    const agent = writeAgent(root, { agentYaml: agentYaml("  stream: true\n", tool("add", "echo add ${a} ${b}") + tool("multiply", "echo multiply ${a} ${b}")) }, "agent-stream");
    const ws = join(root, "ws-stream");
    try {
      const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "stream", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode).toBe(0);
      expect((JSON.parse(result.stdout) as RunResultJson).result).toBe(recordedMessage("openai-chat/tool-result-followup").content);
      expect(actionResults(ws, "stream").map((r) => [r.tool_name, r.observation_content])).toEqual([["add", "add 2 3\n"], ["multiply", "multiply 2 3\n"]]);
      expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expect(server.connections()).toBe(1);
    } finally {
      await server.close();
    }
  });
});
