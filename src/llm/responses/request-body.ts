// Our provider-neutral request as an OpenAI Responses body: stateless (store: false), encrypted reasoning asked for and every reasoning item sent back in order with the calls it preceded.
import type { AssistantMessage, ChatMessage, FunctionTool, LlmRequest } from "../../conversation.js";
import type { ToolCall } from "../../journal/events.js";
import { partsInReplyOrder } from "../reply-order.js";
import { responsesData } from "./provider-data.js";

type Item = Record<string, unknown>;

export interface BodyOptions {
  stream: boolean;
  /**
   * The server refused encrypted reasoning (a model without reasoning: "Encrypted content is not
   * supported with this model"): neither ask for it nor send reasoning items back, as with
   * `store: false` an item without its encrypted content cannot be found.
   */
  withoutReasoning?: boolean;
}

export function toResponsesBody(request: LlmRequest, options: BodyOptions): Record<string, unknown> {
  const withReasoning = options.withoutReasoning !== true;
  const tools = request.tools.map(wireTool);
  return {
    model: request.model,
    ...wireParams(request.params),
    // The journal is the only state: nothing is kept on OpenAI's side, so the reasoning must come back to us.
    store: false,
    ...(withReasoning ? { include: ["reasoning.encrypted_content"] } : {}),
    ...(options.stream ? { stream: true } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.output_format ? { text: { format: { type: "json_schema", ...request.output_format } } } : {}),
    input: request.messages.flatMap((message) => itemsOf(message, withReasoning)),
  };
}

/** agent.yaml's llm settings in Responses terms: max_tokens is max_output_tokens, reasoning_effort is reasoning.effort. */
function wireParams(params: Record<string, unknown>): Record<string, unknown> {
  const { stream: _stream, max_tokens: maxTokens, reasoning_effort: effort, ...rest } = params;
  return {
    ...rest,
    ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {}),
    ...(effort !== undefined ? { reasoning: { effort } } : {}),
  };
}

// Items kept per message object (one map for each reasoning choice), never changed once made: the
// journal's messages are the same objects every iteration, so wire-json.ts serializes an earlier
// turn's items once per run, not once per request.
const itemsWithReasoning = new WeakMap<ChatMessage, Item[]>();
const itemsWithoutReasoning = new WeakMap<ChatMessage, Item[]>();
const toolWire = new WeakMap<FunctionTool, Item>();

function itemsOf(message: ChatMessage, withReasoning: boolean): Item[] {
  const kept = withReasoning ? itemsWithReasoning : itemsWithoutReasoning;
  let items = kept.get(message);
  if (items === undefined) {
    items = toItems(message, withReasoning);
    kept.set(message, items);
  }
  return items;
}

// strict: false as Chat Completions has it: left out, Responses makes every optional parameter required, and the model fills them in.
function wireTool(tool: FunctionTool): Item {
  let wire = toolWire.get(tool);
  if (wire === undefined) {
    wire = { type: "function", name: tool.function.name, description: tool.function.description, parameters: tool.function.parameters, strict: false };
    toolWire.set(tool, wire);
  }
  return wire;
}

function toItems(message: ChatMessage, withReasoning: boolean): Item[] {
  switch (message.role) {
    case "system":
    case "user":
      return [{ role: message.role, content: message.content }];
    case "tool":
      return [{ type: "function_call_output", call_id: message.tool_call_id, output: message.content }];
    case "assistant":
      return assistantItems(message, withReasoning);
  }
}

/** The items of a reply in the order they came: reasoning items as they were, the message and each function call where their places say. */
function assistantItems(message: AssistantMessage, withReasoning: boolean): Item[] {
  return partsInReplyOrder(message, responsesData(message)?.output ?? [], {
    text: "message",
    call: "function_call",
    callId: (place) => place.call_id,
    toText: (text, place) => messageItem(text, place?.phase),
    toCall: functionCall,
    sendsBack: (item) => item.type !== "reasoning" || withReasoning,
  });
}

function messageItem(text: string, phase: unknown): Item {
  return { type: "message", role: "assistant", content: [{ type: "output_text", text }], ...(typeof phase === "string" ? { phase } : {}) };
}

function functionCall(call: ToolCall): Item {
  return { type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments };
}
