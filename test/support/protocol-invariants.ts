// What every request of a native protocol must hold given the replies served before it: earlier thinking and reasoning come back byte for byte and in order, besides the rules every request holds (request-invariants.ts).
import type { RecordedRequest, Step } from "./mock-llm.js";
import { reply } from "./mock-llm.js";
import { recordedJson, recordedStep } from "./recorded.js";
import { anthropicRequestViolations, responsesRequestViolations } from "./request-invariants.js";

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
  const problems = anthropicRequestViolations(body);
  if (!isJson(body) || !Array.isArray(body.messages)) return problems;
  const messages = body.messages as { role: string; content: Json[] }[];
  const sent = anthropicReplyParts(messages.filter((message) => message.role === "assistant").flatMap((message) => message.content));
  const expected = anthropicReplyParts(served.flatMap((reply) => (reply.content as Json[]) ?? []));
  if (JSON.stringify(sent) !== JSON.stringify(expected)) problems.push(`the assistant turns sent back differ from the replies served:\n  sent     ${JSON.stringify(sent).slice(0, 600)}\n  expected ${JSON.stringify(expected).slice(0, 600)}`);
  return problems;
}

/** The violations of one OpenAI Responses request, given the replies served before it in this run. */
export function responsesViolations(body: unknown, served: readonly Json[]): string[] {
  const problems = responsesRequestViolations(body);
  if (!isJson(body) || !Array.isArray(body.input)) return problems;
  const input = body.input as Json[];
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
