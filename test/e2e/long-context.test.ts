// A 60-iteration run whose tool prints 20 KB each time, against a server that refuses long requests with a real context-length error.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { beforeAll, expect, it } from "vitest";
import { JournalEventSchema, type EventOf } from "../../src/journal/events.js";
import { rebuildRequests } from "../../src/store/recorded-requests.js";
import { readInvocationRecords } from "../support/invocation-records.js";
import { delta, modelEnv, readEvents, runDir, writeAgent, setUpE2e } from "./harness.js";
import { messagesOf, reply, type MockLlm, type RecordedRequest, type WireMessage } from "../support/mock-llm.js";
import { filesystemServer, stdioServerYaml } from "../support/mcp-servers.js";
import { recordedEntry, recordedStep } from "../support/recorded.js";

const ITERATIONS = 60;
/** gpt-4o-mini's window, which the engine knows by the model's name. */
const WINDOW = 128_000;
const REPLY_RESERVE = 1_000;
/** The server's real limit, in bytes of the request: below what the engine believes the window to be. */
const SERVER_LIMIT_BYTES = 300_000;
const OVERFLOW = "deepseek/error-context-length-400";
const AS_TEXT = { disallowedSpecial: new Set<string>() };

const { root, serve } = setUpE2e("delta-long-context-");
let server: MockLlm;
const accepted: RecordedRequest[] = [];
const refused: RecordedRequest[] = [];

const counted = new Map<string, number>();

/** Tokens of a text in the model's own encoding; the same observation comes back in many requests, so each is counted once. */
function tokensOf(text: string): number {
  let tokens = counted.get(text);
  if (tokens === undefined) {
    tokens = countTokens(text, AS_TEXT);
    counted.set(text, tokens);
  }
  return tokens;
}

/** What the model sees of a request: every text of its messages. */
function promptTokens(messages: WireMessage[]): number {
  let tokens = 0;
  for (const message of messages) {
    tokens += tokensOf(message.content ?? "");
    for (const call of (message as { tool_calls?: { function: { name: string; arguments: string } }[] }).tool_calls ?? []) {
      tokens += tokensOf(call.function.name + call.function.arguments);
    }
  }
  return tokens;
}

beforeAll(async () => {
  server = await serve((request) => {
    if (Buffer.byteLength(JSON.stringify(request.body)) > SERVER_LIMIT_BYTES) {
      refused.push(request);
      return recordedStep(OVERFLOW);
    }
    accepted.push(request);
    const call = accepted.length;
    if (call > ITERATIONS) return reply.text("all chunks read");
    return reply.toolCalls([{ id: `call_${call}`, name: "read_chunk", arguments: { offset: String(1 + ((call * 7_919) % 40_000)) } }]);
  });
}, 60_000);


it("completes 60 iterations of 20 KB observations within the window, recovering from the server's overflow, with a valid journal", async () => {
  expect(recordedEntry(OVERFLOW).status).toBe(400);
  // 64 KB of words and numbers: about 3 bytes a token, so 20 KB is more than the quarter of the window an observation may take.
  const words = ["delta", "journal", "window", "token", "cache", "prefix", "iteration", "observation", "budget", "model"];
  const corpus = Array.from({ length: 9_000 }, (_, index) => `${words[(index * 7) % words.length]}-${(index * 104_729) % 9_973}`).join(" ");
  const agent = writeAgent(root, {
    agentYaml: [
      "name: long-context",
      "llm:",
      "  model: gpt-4o-mini",
      `  max_tokens: ${REPLY_RESERVE}`,
      "tools:",
      "  - name: read_chunk",
      '    shell: "tail -c +${offset} ${AGENT_HOME}/corpus.txt | head -c 20480"',
    ].join("\n"),
    files: { "corpus.txt": corpus },
  });
  const ws = join(root, "ws");
  const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "long", "--format", "json", "--max-iterations", "400", "-m", "Read every chunk"], {
    env: modelEnv(server.baseUrl),
    timeoutMs: 120_000,
  });
  expect(run.exitCode, run.stderr.slice(-3_000)).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: "all chunks read", metrics: { iterations: ITERATIONS + 1 } });

  // The server refused at least once, each refusal was followed by a smaller request for the same iteration, and it never had to again.
  expect(refused.length).toBeGreaterThanOrEqual(1);
  expect(refused.length).toBeLessThanOrEqual(2);
  for (const request of refused) {
    const next = server.requests[server.requests.indexOf(request) + 1]!;
    expect(accepted).toContain(next);
    expect(Buffer.byteLength(JSON.stringify(next.body))).toBeLessThan(Buffer.byteLength(JSON.stringify(request.body)));
  }

  // No request the engine sent was over its budget: the window less the reply's room.
  for (const request of server.requests) expect(promptTokens(messagesOf(request))).toBeLessThanOrEqual(WINDOW - REPLY_RESERVE);

  // Every request is a valid conversation: each call answered at once by its result, the task first.
  for (const request of accepted) {
    const messages = messagesOf(request);
    expect(messages.find((message) => message.role === "user")?.content).toBe("Read every chunk");
    messages.forEach((message, index) => {
      for (const [offset, call] of (message.tool_calls ?? []).entries()) expect(messages[index + 1 + offset]).toMatchObject({ role: "tool", tool_call_id: call.id });
    });
  }

  // The window moved in jumps: most requests start with the whole previous one.
  const bodies = accepted.map((request) => JSON.stringify(messagesOf(request)));
  const breaks = bodies.slice(1).filter((body, index) => !body.startsWith(bodies[index]!.slice(0, -1))).length;
  expect(breaks).toBeLessThan(ITERATIONS / 5);

  // The journal: every line a valid event, seq without gaps, every action answered, the moves recorded.
  const lines = readFileSync(join(runDir(ws, "long"), "journal.jsonl"), "utf8").split("\n").filter((line) => line !== "");
  lines.forEach((line, index) => expect(JournalEventSchema.parse(JSON.parse(line)).seq).toBe(index + 1));
  const events = readEvents(ws, "long");
  const requested = events.filter((event) => event.type === "ACTION_REQUEST").map((event) => event.action_id);
  const answered = events.filter((event) => event.type === "ACTION_RESULT").map((event) => event.action_id);
  expect(answered).toEqual(requested);
  expect(requested).toHaveLength(ITERATIONS);
  const moves = events.filter((event): event is EventOf<"CONTEXT_WINDOW"> => event.type === "CONTEXT_WINDOW");
  expect(moves.filter((move) => move.reason === "overflow")).toHaveLength(refused.length);
  expect(moves.filter((move) => move.reason === "context_window").length).toBeGreaterThan(0);
  const overflow = moves.find((move) => move.reason === "overflow")!;
  // The recorded body names a 1M-token window and a 1.25M-token request: no tokenizer is that far off, so the engine keeps to less than it sent.
  expect(overflow.overflow).toMatchObject({ server_limit_tokens: 1_048_565, server_requested_tokens: 1_250_025 });
  expect(overflow.overflow!.window_tokens).toBeLessThan(WINDOW);
  expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });

}, 150_000);

it("cuts an observation to a quarter of the window's room in tokens, head and tail kept, the whole output in io/tool_executions/", async () => {
  const window = 8_000;
  const corpus = Array.from({ length: 9_000 }, (_, index) => `w${(index * 104_729) % 9_973}`).join(" ");
  const agent = writeAgent(root, {
    agentYaml: ["name: bounded", "llm:", "  model: gpt-4o-mini", `  context_window: ${window}`, "  max_tokens: 1000", "tools:", "  - name: dump", '    exec: "head -c 20480 ${AGENT_HOME}/corpus.txt"'].join("\n"),
    files: { "corpus.txt": corpus },
  }, "bounded");
  const small = await serve([reply.toolCalls([{ name: "dump", arguments: {} }]), reply.text("done")]);
  try {
    const ws = join(root, "ws-bounded");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "b", "-m", "dump it"], { env: modelEnv(small.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const [result] = readEvents(ws, "b").filter((event): event is EventOf<"ACTION_RESULT"> => event.type === "ACTION_RESULT");
    const observation = result!.observation_content;
    expect(observation.startsWith(corpus.slice(0, 200))).toBe(true);
    expect(observation.endsWith(corpus.slice(20_480 - 200, 20_480))).toBe(true);
    expect(observation).toMatch(/\[\.\.\. \d+ bytes omitted \.\.\.\]/);
    expect(tokensOf(observation.replace(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/, ""))).toBeLessThanOrEqual((window - 1_000) / 4);
    const [execution] = readdirSync(join(runDir(ws, "b"), "io", "tool_executions"));
    expect(JSON.parse(readFileSync(join(runDir(ws, "b"), "io", "tool_executions", execution!), "utf8")).stdout).toBe(corpus.slice(0, 20_480));
  } finally {
    await small.close();
  }
});

it("loads the tokenizer only in a run that could pass a token limit", async () => {
  const probe = join(root, "probe.cjs");
  const report = join(root, "loaded.json");
  // At exit: which files of gpt-tokenizer the process required.
  writeFileSync(probe, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify(Object.keys(require("node:module")._cache).filter((file) => file.includes("gpt-tokenizer")))));\n`);
  const echo = 'exec: "echo ${text}"';
  const tokenizerLoaded = async (name: string, model: string, contextYaml?: string, call = { texts: ["hi"], tool: echo }): Promise<boolean> => {
    const small = await serve([...call.texts.map((text) => reply.toolCalls([{ name: "echo", arguments: { text } }])), reply.text("done")]);
    try {
      const agent = writeAgent(root, { agentYaml: `name: ${name}\nllm:\n  model: ${model}\ntools:\n  - name: echo\n    ${call.tool}\n`, ...(contextYaml ? { contextYaml } : {}) }, name);
      const run = await delta(["run", "--agent", agent, "-w", join(root, `ws-${name}`), "--run-id", name, "-m", "go"], { env: modelEnv(small.baseUrl, { NODE_OPTIONS: `--require ${probe}` }) });
      expect(run.exitCode, run.stderr).toBe(0);
      return (JSON.parse(readFileSync(report, "utf8")) as string[]).length > 0;
    } finally {
      await small.close();
    }
  };
  const journalMaxTokens = (limit: number) => `sources:\n  - type: file\n    path: '\${AGENT_HOME}/system_prompt.md'\n  - type: journal\n    max_tokens: ${limit}\n`;
  // No budget at all; a known 128k window far from full; a max_tokens the conversation passes.
  expect(await tokenizerLoaded("plain", "mock-model")).toBe(false);
  expect(await tokenizerLoaded("known-window", "gpt-4o-mini")).toBe(false);
  expect(await tokenizerLoaded("tight", "gpt-4o-mini", journalMaxTokens(10))).toBe(true);
  // A max_tokens whose bytes the third request passes (a call of 3 KB after a short one; the tool prints its length, an observation far
  // within a quarter of max_tokens) while the estimate (about 1,050) stays under half of it: sized by the estimate, never counted.
  const far = { texts: ["hi", "word ".repeat(600).trim()], tool: `shell: "printf %s \${text} | wc -c"` };
  expect(await tokenizerLoaded("far", "gpt-4o-mini", journalMaxTokens(2_500), far)).toBe(false);
  const third = readEvents(join(root, "ws-far"), "far").find((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT" && event.iteration === 3);
  expect(third).toMatchObject({ content: "done", estimated_by: "bytes" });
});

it("ends FAILED with CONTEXT_OVERFLOW, naming the sizes, when even the smallest context is refused", async () => {
  const refusing = await serve(() => recordedStep("anthropic/error-prompt-too-long-400"));
  try {
    const agent = writeAgent(root, { agentYaml: 'name: refused\nllm:\n  model: claude-sonnet-4-5\ntools:\n  - name: echo\n    exec: "echo ${text}"\n' }, "refused");
    const ws = join(root, "ws-refused");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "r", "--format", "json", "-m", "go"], { env: modelEnv(refusing.baseUrl) });
    expect(run.exitCode).toBe(1);
    const result = JSON.parse(run.stdout) as { status: string; error: { type: string; message: string } };
    expect(result).toMatchObject({ status: "FAILED", error: { type: "CONTEXT_OVERFLOW" } });
    // The server's words, then why no smaller request exists: its count (3,333,404 tokens for a few hundred) is not believable,
    // so the engine keeps to 90% of what it sent, and the task alone is more.
    expect(result.error.message).toMatch(/prompt is too long: 3333404 tokens > 200000 maximum.* The smallest context this run can send needs \d+ tokens/);
    expect(result.error.message).toMatch(/the window the server's refusal leaves, \d+ tokens, leaves \d+ once \d+ are kept for the reply/);
    expect(refusing.requests).toHaveLength(1);
  } finally {
    await refusing.close();
  }
});

it("a second refusal of the smaller request ends the run CONTEXT_OVERFLOW; continue then keeps to the window it learned", async () => {
  let refuse = false;
  let answered = 0;
  const script = await serve(() => {
    if (refuse) return recordedStep("openrouter/error-context-length-400");
    answered += 1;
    return answered > 6 ? reply.text("finished") : reply.toolCalls([{ name: "echo", arguments: { text: `${"word ".repeat(400)}${answered}` } }]);
  });
  try {
    const agent = writeAgent(root, { agentYaml: 'name: twice\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: echo\n    exec: "echo ${text}"\n' }, "twice");
    const ws = join(root, "ws-twice");
    const stop = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "t", "--format", "json", "--max-iterations", "4", "-m", "go"], { env: modelEnv(script.baseUrl) });
    expect(JSON.parse(stop.stdout)).toMatchObject({ status: "FAILED", error: { type: "MAX_ITERATIONS" } });
    refuse = true;
    const failed = await delta(["continue", "--run-id", "t", "-w", ws, "--format", "json"], { env: modelEnv(script.baseUrl) });
    expect(failed.exitCode).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ status: "FAILED", error: { type: "CONTEXT_OVERFLOW", message: expect.stringContaining("maximum context length is 200000 tokens") } });
    const [move] = readEvents(ws, "t").filter((event): event is EventOf<"CONTEXT_WINDOW"> => event.type === "CONTEXT_WINDOW");
    expect(move).toMatchObject({ iteration: 5, reason: "overflow", first_iteration: 4, overflow: { server_limit_tokens: 200_000, server_requested_tokens: 2_500_021 } });
    const refusedSizes = script.requests.slice(-2).map((request) => JSON.stringify(messagesOf(request)).length);
    expect(refusedSizes[1]).toBeLessThan(refusedSizes[0]!);

    refuse = false;
    const resumed = await delta(["continue", "--run-id", "t", "-w", ws, "--format", "json"], { env: modelEnv(script.baseUrl) });
    expect(resumed.exitCode, resumed.stdout).toBe(0);
    // After the refusals the window starts at iteration 4 or later: iterations 1–3 are never sent again.
    const after = script.requests.slice(script.requests.length - 3);
    for (const request of after) expect(JSON.stringify(messagesOf(request))).not.toMatch(/word (1|2|3)\b/);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "finished" });
  } finally {
    await script.close();
  }
});

it("-v shows, every iteration, the tokens of each source and what the window dropped", async () => {
  const small = await serve((request) => {
    const done = messagesOf(request).filter((message) => message.role === "tool").length;
    const iterations = Number(/(\d+)$/.exec(messagesOf(request).filter((message) => message.role === "tool").at(-1)?.content?.trim() ?? "")?.[1] ?? 0);
    return iterations >= 5 || done > 10 ? reply.text("done") : reply.toolCalls([{ name: "echo", arguments: { text: String(iterations + 1) } }]);
  });
  try {
    const contextYaml = "sources:\n  - type: file\n    id: system_prompt\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: journal\n    id: history\n    max_iterations: 2\n";
    const agent = writeAgent(root, { contextYaml }, "verbose");
    const ws = join(root, "ws-verbose");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "v", "-v", "-m", "count to five"], { env: modelEnv(small.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/\[log\] context: 'system_prompt' \(sources\[0\]\) \/\S+\/system_prompt.md: \d+ chars, ≈\d+ tokens/);
    expect(run.stderr).toMatch(/\[log\] context: 'history' \(sources\[1\]\) → \d+ messages, ≈\d+ tokens/);
    expect(run.stderr).toMatch(/\[log\] context: window moved: iterations 1–2 dropped \(more than max_iterations 2\); the context shows iteration 3 on/);
    expect(run.stderr).toMatch(/iterations before 3 dropped/);
    // delta show prints the same move from the journal's CONTEXT_WINDOW event.
    const shown = await delta(["show", "v", "-w", ws]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/window\s+iterations 1–2 dropped \(more than max_iterations 2\); the context shows iteration 3 on/);
  } finally {
    await small.close();
  }
});

it("a replay of a run that recovered from an overflow is refused at the same call, and sends the same requests", async () => {
  let answered = 0;
  const limited = await serve((request) => {
    if (Buffer.byteLength(JSON.stringify(request.body)) > 9_000) return recordedStep("xai/error-context-length-string-error-400");
    answered += 1;
    return answered > 8 ? reply.text("done") : reply.toolCalls([{ name: "echo", arguments: { text: `${"token ".repeat(250)}${answered}` } }]);
  });
  try {
    const agent = writeAgent(root, { agentYaml: 'name: replayed\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: echo\n    exec: "echo ${text}"\n' }, "replayed");
    const ws = join(root, "ws-replayed");
    const original = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "original", "-m", "go"], { env: modelEnv(limited.baseUrl) });
    expect(original.exitCode, original.stderr).toBe(0);
    const replay = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "again", "--replay", runDir(ws, "original"), "-m", "go"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(replay.exitCode, replay.stderr).toBe(0);

    const moves = (runId: string) => readEvents(ws, runId).flatMap((event) => (event.type === "CONTEXT_WINDOW" ? [{ ...event, seq: 0, timestamp: "", hash: "" }] : []));
    expect(moves("original").some((move) => move.reason === "overflow")).toBe(true);
    expect(moves("again")).toEqual(moves("original"));
    const requests = (runId: string) => {
      const paths = { invocationsDir: join(runDir(ws, runId), "io", "invocations"), journal: join(runDir(ws, runId), "journal.jsonl") };
      return rebuildRequests(paths, readInvocationRecords(paths)).map(({ request }) => (request as { messages: unknown }).messages);
    };
    expect(requests("again")).toEqual(requests("original"));
  } finally {
    await limited.close();
  }
});

// The Anthropic and Responses protocols: the same recovery, from each server's own recorded words.
for (const [protocol, provider, refusal] of [
  ["anthropic", "anthropic", "anthropic/error-prompt-too-long-400"],
  ["openai-responses", "openai-responses", "openai-responses/error-context-length-exceeded-400"],
] as const) {
  it(`recovers from ${protocol}'s context-length refusal: the window shrunk once, the request sent again smaller, the run completed`, async () => {
    const limitBytes = 12_000;
    let answered = 0;
    const native = await serve((request) => {
      if (Buffer.byteLength(JSON.stringify(request.body)) > limitBytes) return recordedStep(refusal);
      answered += 1;
      return answered > 12 ? reply.text("done") : reply.toolCalls([{ name: "echo", arguments: { text: `${"chunk ".repeat(300)}${answered}` } }]);
    }, { protocol });
    try {
      const agent = writeAgent(root, { agentYaml: `name: native-${provider}\nllm:\n  model: test-model\n  provider: ${provider}\n  max_retries: 0\ntools:\n  - name: echo\n    exec: "echo \${text}"\n` }, `native-${provider}`);
      const ws = join(root, `ws-native-${provider}`);
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "n", "--format", "json", "-m", "go"], { env: modelEnv(native.baseUrl) });
      expect(run.exitCode, run.stderr.slice(-2_000)).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: "done" });
      const sizes = native.requests.map((request) => Buffer.byteLength(JSON.stringify(request.body)));
      const refusedAt = sizes.flatMap((size, index) => (size > limitBytes ? [index] : []));
      // Refused once: the retry for the same iteration was smaller and accepted, and the learned window kept every later request under the limit.
      expect(refusedAt).toHaveLength(1);
      expect(sizes[refusedAt[0]! + 1]).toBeLessThanOrEqual(limitBytes);
      const moves = readEvents(ws, "n").filter((event): event is EventOf<"CONTEXT_WINDOW"> => event.type === "CONTEXT_WINDOW");
      expect(moves.filter((move) => move.reason === "overflow")).toHaveLength(1);
      expect(moves[0]!.overflow!.window_tokens).toBeGreaterThan(0);
    } finally {
      await native.close();
    }
  });
}

it("keeps room for the max_tokens an Anthropic request carries when llm.max_tokens is not set (8192), not the default quarter", async () => {
  const anthropic = await serve([reply.text("never asked")], { protocol: "anthropic" });
  try {
    const agent = writeAgent(root, { agentYaml: 'name: reserve\nllm:\n  model: claude-sonnet-4-5\n  provider: anthropic\n  context_window: 8400\ntools:\n  - name: echo\n    exec: "echo ${text}"\n' }, "reserve");
    const run = await delta(["run", "--agent", agent, "-w", join(root, "ws-reserve"), "--format", "json", "-m", "go"], { env: modelEnv(anthropic.baseUrl) });
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "FAILED", error: { type: "CONTEXT_OVERFLOW", message: expect.stringContaining("the model's window, 8400 tokens, leaves 208 once 8192 are kept for the reply") } });
    expect(anthropic.requests).toHaveLength(0);
  } finally {
    await anthropic.close();
  }
});

it("bounds an MCP tool's result in tokens as an exec tool's, the whole result in io/tool_executions/", async () => {
  const window = 8_000;
  const corpus = Array.from({ length: 9_000 }, (_, index) => `w${(index * 104_729) % 9_973}`).join(" ");
  const ws = join(root, "ws-mcp-bounded");
  mkdirSync(ws);
  writeFileSync(join(ws, "corpus.txt"), corpus);
  const agent = writeAgent(root, {
    agentYaml: `name: mcp-bounded\nllm:\n  model: gpt-4o-mini\n  context_window: ${window}\n  max_tokens: 1000\nmcp_servers:\n${stdioServerYaml("fs", filesystemServer("${CWD}"))}`,
  }, "mcp-bounded");
  const small = await serve([reply.toolCalls([{ name: "fs__read_text_file", arguments: { path: "corpus.txt" } }]), reply.text("done")]);
  try {
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "m", "-m", "read it"], { env: modelEnv(small.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const [result] = readEvents(ws, "m").filter((event): event is EventOf<"ACTION_RESULT"> => event.type === "ACTION_RESULT");
    const observation = result!.observation_content;
    expect(observation.startsWith(corpus.slice(0, 200))).toBe(true);
    expect(observation.endsWith(corpus.slice(-200))).toBe(true);
    expect(tokensOf(observation.replace(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/, ""))).toBeLessThanOrEqual((window - 1_000) / 4);
    const [execution] = readdirSync(join(runDir(ws, "m"), "io", "tool_executions"));
    expect(readFileSync(join(runDir(ws, "m"), "io", "tool_executions", execution!), "utf8")).toContain(corpus.slice(40_000, 40_200));
  } finally {
    await small.close();
  }
});
