// What every request of a native protocol must hold, checked on each captured request: results answer calls, earlier thinking and reasoning come back byte for byte and in order, cache breakpoints within Anthropic's limit.
import type { RecordedRequest, Step } from "./mock-llm.js";
import { reply } from "./mock-llm.js";
import { recordedJson, recordedStep } from "./recorded.js";

type Json = Record<string, unknown>;
export type NativeProtocol = "anthropic" | "openai-responses";

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The assistant side of a conversation as a list of tokens: a block or item kept whole (thinking,
 * redacted_thinking, reasoning) as its exact JSON, a tool call as its id, text as its text. The
 * request's list must equal the served replies' list: byte-identical and in order.
 */
function anthropicReplyParts(blocks: Json[]): string[] {
  return blocks.map((block) => (block.type === "tool_use" ? `tool_use ${String(block.id)}` : block.type === "text" ? `text ${String(block.text)}` : JSON.stringify(block)));
}

function responsesReplyParts(items: Json[]): string[] {
  return items.map((item) => {
    if (item.type === "function_call") return `function_call ${String(item.call_id)}`;
    if (item.type === "message") return `message ${((item.content as Json[]) ?? []).map((part) => String(part.text ?? part.refusal)).join("")}`;
    return JSON.stringify(item);
  });
}

/** The violations of one Anthropic Messages request, given the replies served before it in this run. */
export function anthropicViolations(body: unknown, served: readonly Json[]): string[] {
  const problems: string[] = [];
  if (!isJson(body) || !Array.isArray(body.messages)) return ["the body has no messages"];
  const messages = body.messages as { role: string; content: Json[] }[];
  if (typeof body.max_tokens !== "number") problems.push("max_tokens is missing");
  messages.forEach((message, index) => {
    if (index > 0 && messages[index - 1]!.role === message.role) problems.push(`messages ${index - 1} and ${index} are both ${message.role}`);
    const uses = message.content.filter((block) => block.type === "tool_use").map((block) => block.id);
    const next = messages[index + 1];
    const results = (next?.content ?? []).filter((block) => block.type === "tool_result").map((block) => block.tool_use_id);
    if (message.role === "assistant" && next && JSON.stringify(results) !== JSON.stringify(uses)) problems.push(`message ${index + 1}'s tool results ${JSON.stringify(results)} do not answer the calls ${JSON.stringify(uses)}`);
    const firstOther = message.content.findIndex((block) => block.type !== "tool_result");
    if (firstOther !== -1 && message.content.slice(firstOther).some((block) => block.type === "tool_result")) problems.push(`message ${index} has a tool result after other blocks`);
  });
  const marked = [...((body.tools as Json[]) ?? []), ...((body.system as Json[]) ?? []), ...messages.flatMap((message) => message.content)].filter((block) => block.cache_control !== undefined);
  if (marked.length === 0 || marked.length > 4) problems.push(`${marked.length} cache breakpoints (want 1 to 4)`);
  if (marked.some((block) => block.type === "thinking" || block.type === "redacted_thinking")) problems.push("a thinking block carries cache_control");
  const sent = anthropicReplyParts(messages.filter((message) => message.role === "assistant").flatMap((message) => message.content));
  const expected = anthropicReplyParts(served.flatMap((reply) => (reply.content as Json[]) ?? []));
  if (JSON.stringify(sent) !== JSON.stringify(expected)) problems.push(`the assistant turns sent back differ from the replies served:\n  sent     ${JSON.stringify(sent).slice(0, 600)}\n  expected ${JSON.stringify(expected).slice(0, 600)}`);
  return problems;
}

/** The violations of one OpenAI Responses request, given the replies served before it in this run. */
export function responsesViolations(body: unknown, served: readonly Json[]): string[] {
  const problems: string[] = [];
  if (!isJson(body) || !Array.isArray(body.input)) return ["the body has no input"];
  if (body.store !== false) problems.push("store is not false");
  if (!Array.isArray(body.include) || !body.include.includes("reasoning.encrypted_content")) problems.push("encrypted reasoning is not asked for");
  const input = body.input as Json[];
  const calls: string[] = [];
  const answered = new Set<string>();
  for (const item of input) {
    if (item.type === "function_call") calls.push(String(item.call_id));
    if (item.type === "function_call_output") {
      const id = String(item.call_id);
      if (!calls.includes(id)) problems.push(`function_call_output ${id} answers no earlier function_call`);
      if (answered.has(id)) problems.push(`function_call ${id} is answered twice`);
      answered.add(id);
    }
  }
  for (const id of calls) if (!answered.has(id)) problems.push(`function_call ${id} has no output`);
  const sent = responsesReplyParts(input.filter((item) => item.type === "reasoning" || item.type === "function_call" || (item.type === "message" && item.role === "assistant")));
  const expected = responsesReplyParts(served.flatMap((reply) => (reply.output as Json[]) ?? []));
  if (JSON.stringify(sent) !== JSON.stringify(expected)) problems.push(`the assistant items sent back differ from the replies served:\n  sent     ${JSON.stringify(sent).slice(0, 600)}\n  expected ${JSON.stringify(expected).slice(0, 600)}`);
  return problems;
}

export interface CheckedServer {
  /** The mock server's script: each request checked, then answered with the next reply. */
  script: (request: RecordedRequest, index: number) => Step;
  /** Every violation found, request by request; empty when all held. */
  violations: string[];
  /** How many requests were checked. */
  checked(): number;
}

/**
 * Serves `replies` (bodies of the protocol, the name of a recorded reply served byte for byte, or a
 * step for a fault) in order, checking each request
 * against the replies served before it; a request that breaks an invariant is refused with 400,
 * so a run cannot succeed on a bad request.
 */
export function checkedServer(protocol: NativeProtocol, replies: readonly (Json | Step | string)[]): CheckedServer {
  const served: Json[] = [];
  const violations: string[] = [];
  let checked = 0;
  let position = 0;
  const check = protocol === "anthropic" ? anthropicViolations : responsesViolations;
  return {
    violations,
    checked: () => checked,
    script: (request, index) => {
      checked += 1;
      const problems = check(request.body, served);
      if (problems.length > 0) {
        violations.push(...problems.map((problem) => `request ${index + 1}: ${problem}`));
        return reply.raw(400, { type: "error", error: { type: "invalid_request_error", message: `test server: ${problems.join("; ")}` } });
      }
      const next = replies[position];
      position += 1;
      if (next === undefined) return reply.raw(500, { type: "error", error: { type: "api_error", message: "test server: no more replies" } });
      if (typeof next === "string") {
        served.push(recordedJson(next) as Json);
        return recordedStep(next);
      }
      if ("kind" in next) return next as Step;
      served.push(next);
      return reply.raw(200, next);
    },
  };
}
