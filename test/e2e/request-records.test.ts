// io/invocations/ keeps each distinct message once: every request the model server received is rebuilt from the records byte for byte, for each protocol, and the old whole-request records stay readable.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LlmRequest } from "../../src/conversation.js";
import { toMessagesBody } from "../../src/llm/anthropic/request-body.js";
import { toChatCompletionBody } from "../../src/llm/chat-completions/request-body.js";
import { rebuildRequests } from "../../src/store/recorded-requests.js";
import { readInvocationRecords } from "../support/invocation-records.js";
import { toResponsesBody } from "../../src/llm/responses/request-body.js";
import { runPaths } from "../../src/store/run-dir.js";
import { reply, type MockLlm, type RecordedRequest, type Step } from "../support/mock-llm.js";
import { checkedServer } from "../support/protocol-invariants.js";
import { recordedJson, recordedStep } from "../support/recorded.js";
import { CRASH_TRACE, delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";
import { parseRunId } from "../../src/store/run-id.js";

type Json = Record<string, unknown>;

const { root, serve } = setUpE2e("delta-request-records-");
let server: MockLlm | undefined;

/** The requests of a run as its records give them back, in call order. */
function rebuilt(ws: string, runId: string): LlmRequest[] {
  const paths = runPaths(ws, parseRunId(runId));
  return rebuildRequests(paths, readInvocationRecords(paths)).map(({ request }) => request);
}

function folderBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => sum + (entry.isDirectory() ? folderBytes(join(dir, entry.name)) : statSync(join(dir, entry.name)).size), 0);
}

const ITERATIONS = 30;
const SERVER_LIMIT_BYTES = 12_000;
const OVERFLOW = "deepseek/error-context-length-400";

describe("a long chat-completions run: window jumps, an overflow retry, a pre_llm_request hook", () => {
  // The hook adds a note to every third request, so what was sent is not what the context builder made.
  const hook = `let input = "";
process.stdin.on("data", (chunk) => (input += chunk)).on("end", () => {
  const { iteration, payload } = JSON.parse(input);
  if (iteration % 3 !== 0) return;
  process.stdout.write(JSON.stringify({ payload: { messages: [...payload.messages, { role: "user", content: "note for iteration " + iteration }] } }));
});
`;
  const agentYaml = (io: string) =>
    [
      "name: long-records",
      "llm:",
      "  model: mock-model",
      "  context_window: 9000",
      "  max_tokens: 500",
      "tools:",
      "  - name: read",
      '    shell: "yes ${word} | head -c 2000"',
      io,
    ].join("\n");

  /** Runs the scripted conversation: the server refuses the first request over its limit once, as a real server names a context length. */
  async function longRun(name: string, io: string): Promise<{ ws: string; accepted: RecordedRequest[]; refused: number }> {
    const accepted: RecordedRequest[] = [];
    let refused = 0;
    server = await serve((request): Step => {
      if (refused === 0 && Buffer.byteLength(JSON.stringify(request.body)) > SERVER_LIMIT_BYTES) {
        refused += 1;
        return recordedStep(OVERFLOW);
      }
      accepted.push(request);
      const call = accepted.length;
      if (call > ITERATIONS) return reply.text("all read");
      return reply.toolCalls([{ id: `call_${call}`, name: "read", arguments: { word: `word${call}` } }], call % 4 === 0 ? `Reading ${call}` : null);
    });
    const agent = writeAgent(root, { agentYaml: agentYaml(io), hooksYaml: 'pre_llm_request:\n  command: ["node", "${AGENT_HOME}/hook.mjs"]\n', files: { "hook.mjs": hook } }, `agent-${name}`);
    const ws = join(root, `ws-${name}`);
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "Read every word", "--format", "json", "--max-iterations", "100"], { env: modelEnv(server.baseUrl), timeoutMs: 120_000 });
    expect(result.stderr).not.toMatch(CRASH_TRACE);
    expect(result.exitCode, result.stderr.slice(-2000)).toBe(0);
    await server.close();
    server = undefined;
    return { ws, accepted, refused };
  }

  it("rebuilds every request the server answered byte for byte, as today's whole records hold it, in a fraction of their bytes; show --request prints it", async () => {
    const parts = await longRun("parts", "");
    const full = await longRun("full", "io:\n  requests: full\n");
    expect(parts.refused).toBe(1);
    const moves = readEvents(parts.ws, "parts").filter((event) => event.type === "CONTEXT_WINDOW");
    expect(moves.some((move) => move.type === "CONTEXT_WINDOW" && move.reason === "overflow")).toBe(true);
    expect(moves.filter((move) => move.type === "CONTEXT_WINDOW" && move.reason === "context_window").length).toBeGreaterThan(0);

    const requests = rebuilt(parts.ws, "parts");
    expect(requests).toHaveLength(ITERATIONS + 1);
    // Passed through the wire protocol, each gives the body the server received: the hook's notes included.
    requests.forEach((request, index) => expect(JSON.stringify(toChatCompletionBody(request, { stream: false })), `call ${index + 1}`).toBe(JSON.stringify(parts.accepted[index]!.body)));
    expect(requests.filter((request) => request.messages.some((message) => message.content?.startsWith("note for iteration"))).length).toBeGreaterThan(5);

    // Today's records (io.requests: full) hold exactly the same request fields.
    const fullRecords = readInvocationRecords(runPaths(full.ws, parseRunId("full")));
    expect(fullRecords.every(({ record }) => record.request !== undefined && record.request_parts === undefined)).toBe(true);
    expect(fullRecords.map(({ file }) => JSON.stringify((JSON.parse(readFileSync(file, "utf8")) as { request: unknown }).request))).toEqual(requests.map((request) => JSON.stringify(request)));

    const partsBytes = folderBytes(join(runPaths(parts.ws, parseRunId("parts")).runDir, "io", "invocations"));
    const fullBytes = folderBytes(join(runPaths(full.ws, parseRunId("full")).runDir, "io", "invocations"));
    // The observations stay in the journal, which the parts point at. A hook's replacement comes back with each
    // message's fields in its own order and no tie to the journal, so those messages are stored whole, once each.
    expect(partsBytes).toBeLessThan(0.35 * fullBytes);

    const shown = await delta(["show", "parts", "-w", parts.ws, "--request", "7"]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(shown.stdout))).toBe(JSON.stringify(requests[6]));
    const missing = await delta(["show", "parts", "-w", parts.ws, "--request", "99"]);
    expect(missing.exitCode).toBe(126);
    expect(missing.stderr).toContain(`has no recorded request for iteration 99: it has requests for iterations 1 to ${ITERATIONS + 1}`);
  }, 240_000);
});

describe("native protocols", () => {
  const TOOLS = 'tools:\n  - name: echo\n    exec: "echo ${text}"\n';
  const recordedContent = (name: string) => (recordedJson(name) as { content: Json[] }).content;
  const recordedOutput = (name: string) => (recordedJson(name) as { output: Json[] }).output;

  async function run(name: string, llm: string, key: string): Promise<string> {
    const agent = writeAgent(root, { agentYaml: `name: native\nllm:\n  model: test-model\n  max_retries: 0\n${llm}${TOOLS}` }, `agent-${name}`);
    const ws = join(root, `ws-${name}`);
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go", "--format", "json"], { env: { DELTA_BASE_URL: server!.baseUrl, DELTA_API_KEY: key } });
    expect(result.exitCode, result.stderr).toBe(0);
    return ws;
  }

  it("Anthropic: thinking and redacted-thinking blocks come back from the records into the bodies the server received", async () => {
    const THINKING = recordedContent("anthropic/thinking-signature-tool-use")[0]!;
    const REDACTED = recordedContent("anthropic/redacted-thinking")[0]!;
    const message = (content: Json[], stop: string): Json => ({ id: "msg_1", type: "message", role: "assistant", model: "claude-test-model", content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } });
    const checked = checkedServer("anthropic", [
      message([THINKING, { type: "text", text: "Echoing." }, { type: "tool_use", id: "toolu_a", name: "echo", input: { text: "one" } }], "tool_use"),
      message([REDACTED, { type: "tool_use", id: "toolu_b", name: "echo", input: { text: "two" } }], "tool_use"),
      message([{ type: "text", text: "done" }], "end_turn"),
    ]);
    server = await serve(checked.script, { protocol: "anthropic" });
    const ws = await run("anthropic-records", "  provider: anthropic\n  thinking: { budget_tokens: 1024 }\n", "sk-ant-records-0123456789");
    expect(checked.violations).toEqual([]);
    const requests = rebuilt(ws, "anthropic-records");
    expect(requests).toHaveLength(3);
    requests.forEach((request, index) => expect(JSON.stringify(toMessagesBody(request, { stream: false }))).toBe(JSON.stringify(server!.requests[index]!.body)));
    expect(JSON.stringify(server!.requests[2]!.body)).toContain(JSON.stringify(REDACTED));
  });

  it("OpenAI Responses: encrypted reasoning items come back from the records into the bodies the server received", async () => {
    const REASONING = [1, 2].map((turn) => recordedOutput(`openai-responses/tool-loop-turn-${turn}-cache`)[0]!);
    const response = (output: Json[]): Json => ({ id: "resp_1", object: "response", status: "completed", error: null, incomplete_details: null, model: "gpt-test-model", output, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
    const call = (id: string, text: string) => ({ id: `fc_${id}`, type: "function_call", status: "completed", arguments: JSON.stringify({ text }), call_id: id, name: "echo" });
    const checked = checkedServer("openai-responses", [
      response([REASONING[0]!, call("call_a", "one")]),
      response([REASONING[1]!, call("call_b", "two")]),
      response([{ id: "msg_f", type: "message", status: "completed", content: [{ type: "output_text", annotations: [], text: "done" }], role: "assistant" }]),
    ]);
    server = await serve(checked.script, { protocol: "openai-responses" });
    const ws = await run("responses-records", "  provider: openai-responses\n  reasoning_effort: low\n", "sk-openai-records-0123456789");
    expect(checked.violations).toEqual([]);
    const requests = rebuilt(ws, "responses-records");
    expect(requests).toHaveLength(3);
    requests.forEach((request, index) => expect(JSON.stringify(toResponsesBody(request, { stream: false }))).toBe(JSON.stringify(server!.requests[index]!.body)));
    expect(JSON.stringify(server!.requests[2]!.body)).toContain(JSON.stringify(REASONING[1]!.encrypted_content));
  });
});

