// Two model requests are equal when they are the same after normalizing run ids, workspace and agent paths, call ids and timestamps; otherwise the parts that differ are named.
import { describe, expect, it } from "vitest";
import type { ChatMessage, FunctionTool, LlmRequest } from "../../src/conversation.js";
import { compareRequests, normalizeRequest, requestsEqual, type RunFacts } from "../../src/llm/request-equality.js";
import { REDACTED } from "../../src/secrets.js";

const A: RunFacts = { runIds: ["run-alpha"], workDir: "/tmp/ws-a", agentHome: "/home/me/agent" };
const B: RunFacts = { runIds: ["20251013_143522_a1b2c3"], workDir: "/srv/ci/W002", agentHome: "/srv/ci/agent" };

const echo: FunctionTool = { type: "function", function: { name: "echo", description: "Echo a text", parameters: { type: "object", properties: { text: { type: "string" } } } } };

/** A request of a run with `facts`: its paths, run id, a call id and a time inside its texts. */
function requestOf(facts: RunFacts, callId: string, time: string, change: Partial<LlmRequest> = {}): LlmRequest {
  const messages: ChatMessage[] = [
    { role: "system", content: `You are a test agent. Your files are in ${facts.agentHome}/notes.` },
    { role: "user", content: "List the files" },
    { role: "assistant", content: null, tool_calls: [{ id: callId, name: "echo", arguments: `{"text":"${facts.workDir}/a.txt"}` }] },
    { role: "tool", tool_call_id: callId, content: `run ${facts.runIds[0]} at ${time} (key ${facts.runIds[0]}:1:${callId}) wrote ${facts.workDir}/a.txt` },
  ];
  return { model: "gpt-4o-mini", messages, tools: [echo], params: { temperature: 0 }, ...change };
}

describe("equal requests", () => {
  it("are equal across runs once run ids, paths, call ids and timestamps are normalized", () => {
    const a = requestOf(A, "call_9f2Kx", "2025-10-13T14:35:22.123Z");
    const b = requestOf(B, "toolu_01XyZ", "2026-01-02T03:04:05+01:00");
    expect(compareRequests({ request: a, facts: A }, { request: b, facts: B })).toEqual([]);
    expect(normalizeRequest(a, A).messages[3]).toEqual({ role: "tool", tool_call_id: "<call-1>", content: "run <run-id> at <timestamp> (key <run-id>:1:<call-1>) wrote <workspace>/a.txt" });
    expect(normalizeRequest(a, A).messages[0]!.content).toBe("You are a test agent. Your files are in <agent>/notes.");
  });

  it("are equal whatever order an object's keys were written in", () => {
    const a = requestOf(A, "call_1abc", "2025-10-13T14:35:22Z");
    const reordered = { ...a, tools: [{ function: { parameters: echo.function.parameters, description: echo.function.description, name: "echo" }, type: "function" as const }] };
    expect(requestsEqual({ request: a, facts: A }, { request: reordered, facts: A })).toBe(true);
  });

  it("compare a live request as its record holds it: the run's secrets and secret-named fields redacted", () => {
    const secret = "sk-live-0123456789abcdef";
    const live = requestOf(A, "call_1abc", "2025-10-13T14:35:22Z", { params: { temperature: 0, api_key: secret } });
    live.messages.push({ role: "user", content: `the key is ${secret}` });
    const recorded = requestOf(A, "call_1abc", "2025-10-13T14:35:22Z", { params: { temperature: 0, api_key: REDACTED } });
    recorded.messages.push({ role: "user", content: `the key is ${REDACTED}` });
    expect(compareRequests({ request: live, facts: { ...A, secrets: [secret] } }, { request: recorded, facts: A })).toEqual([]);
  });

  it("stay equal when one run's id is a word both texts hold: it is replaced on both sides", () => {
    const named: RunFacts = { ...B, runIds: ["prompt"] };
    const request: LlmRequest = { model: "m", tools: [], params: {}, messages: [{ role: "user", content: "Write the prompt" }] };
    expect(compareRequests({ request, facts: A }, { request, facts: named })).toEqual([]);
    expect(normalizeRequest(request, A, [A, named]).messages[0]!.content).toBe("Write the <run-id>");
  });

  it("keep the workspace a workspace when it lies inside the agent's folder", () => {
    const inside: RunFacts = { runIds: ["run-alpha"], workDir: "/home/me/agent/workspaces/W001", agentHome: "/home/me/agent" };
    expect(normalizeRequest(requestOf(inside, "call_1abc", "x"), inside).messages[2]).toMatchObject({ tool_calls: [{ arguments: '{"text":"<workspace>/a.txt"}' }] });
  });

  it("leave words that only contain an id, a path that goes on, and ids too short to tell from a word", () => {
    const facts: RunFacts = { runIds: ["run-1", "ab"], workDir: "/tmp/ws", agentHome: "/tmp/agent" };
    const request: LlmRequest = { model: "m", tools: [], params: {}, messages: [{ role: "user", content: "run-10 my-run-1 run-1. run-1.txt /tmp/ws2 /tmp/ws/x ab cab 20251013T143522123Z" }] };
    expect(normalizeRequest(request, facts).messages[0]!.content).toBe("run-10 my-run-1 <run-id>. run-1.txt /tmp/ws2 <workspace>/x ab cab <timestamp>");
  });
});

describe("requests that differ", () => {
  const base = requestOf(A, "call_1abc", "2025-10-13T14:35:22Z");
  const compare = (changed: LlmRequest) => compareRequests({ request: base, facts: A }, { request: changed, facts: A });

  it("name a changed system prompt, with both texts", () => {
    const changed = { ...base, messages: [{ role: "system" as const, content: "You are a careful agent." }, ...base.messages.slice(1)] };
    const [difference, ...rest] = compare(changed);
    expect(rest).toEqual([]);
    expect(difference).toMatchObject({ part: "system prompt", summary: "the system prompt changed", a: "You are a test agent. Your files are in <agent>/notes.", b: "You are a careful agent." });
  });

  it("name a tool whose description changed, one added and one removed", () => {
    const described = { ...echo, function: { ...echo.function, description: "Echo a text back" } };
    expect(compare({ ...base, tools: [described] })).toEqual([expect.objectContaining({ part: "tools", summary: "tools changed: echo: description changed" })]);
    const grep: FunctionTool = { type: "function", function: { name: "grep", description: "Search", parameters: {} } };
    expect(compare({ ...base, tools: [grep] })[0]!.summary).toBe("tools changed: added grep; removed echo");
    expect(compare({ ...base, tools: [echo, grep] })[0]!.summary).toBe("tools changed: added grep");
  });

  it("name a changed model and changed parameters", () => {
    expect(compare({ ...base, model: "gpt-4o" })).toEqual([expect.objectContaining({ part: "model", summary: "the model changed: gpt-4o-mini → gpt-4o" })]);
    expect(compare({ ...base, params: { temperature: 0.7, max_tokens: 100 } })).toEqual([expect.objectContaining({ part: "parameters", summary: "parameters changed: max_tokens, temperature" })]);
    const schema = { name: "answer", schema: { type: "object" }, strict: true };
    expect(compare({ ...base, output_format: schema })[0]!.summary).toBe("parameters changed: output_format");
  });

  it("name the first message that differs, and one only one side has", () => {
    const answered = base.messages.map((message, index) => (index === 3 ? { ...message, content: "something else" } : message));
    expect(compare({ ...base, messages: answered })).toEqual([expect.objectContaining({ part: "messages", summary: "message 4 (tool) changed" })]);
    const longer = { ...base, messages: [...base.messages, { role: "user" as const, content: "and now?" }] };
    expect(compare(longer)).toEqual([expect.objectContaining({ part: "messages", summary: "message 5 (user) is new: 4 messages before, 5 now", a: "", b: "[user]\nand now?" })]);
  });

  it("tell apart two calls to different tools though their ids are normalized alike", () => {
    const other = base.messages.map((message) => (message.role === "assistant" ? { ...message, tool_calls: [{ id: "call_zz99", name: "echo", arguments: '{"text":"other"}' }] } : message));
    expect(compare({ ...base, messages: other })).toEqual([expect.objectContaining({ part: "messages", summary: "message 3 (assistant) changed: its tool calls" })]);
  });

  it("name every part that differs, in order", () => {
    expect(compare({ ...base, model: "x", tools: [] }).map((difference) => difference.part)).toEqual(["model", "tools"]);
  });
});
