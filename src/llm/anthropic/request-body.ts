// Our provider-neutral request as an Anthropic Messages body: system blocks, tools with input_schema, tool_use and tool_result blocks, thinking blocks sent back unchanged, cache breakpoints.
import type { AssistantMessage, ChatMessage, FunctionTool, LlmRequest } from "../../conversation.js";
import type { ToolCall } from "../../journal/events.js";
import { isRecord } from "../is-record.js";
import { anthropicMaxTokens } from "../reply-tokens.js";
import { partsInReplyOrder } from "../reply-order.js";
import { withCacheBreakpoints, type CachedParts, type WireMessage } from "./cache-breakpoints.js";
import { anthropicData } from "./provider-data.js";

type Block = Record<string, unknown>;

interface MessagesBody {
  model: string;
  max_tokens: number;
  tools?: Block[];
  system?: Block[];
  messages: WireMessage[];
  [param: string]: unknown;
}

export function toMessagesBody(request: LlmRequest, options: { stream: boolean }): MessagesBody {
  const { tools, system, messages } = withCacheBreakpoints({ ...toWireConversation(request.messages), tools: request.tools.map(wireTool) });
  return {
    model: request.model,
    ...wireParams(request.params),
    ...(options.stream ? { stream: true } : {}),
    // Tools, system, messages: the order Anthropic caches a prompt in, so the body's bytes grow at its end only.
    ...(tools.length > 0 ? { tools } : {}),
    ...(system.length > 0 ? { system } : {}),
    // Structured outputs (GA: output_config.format); llm/structured-output.ts sends it only to models that have them.
    ...(request.output_format ? { output_config: { format: { type: "json_schema", schema: request.output_format.schema } } } : {}),
    messages,
  };
}

/** agent.yaml's llm settings in Messages terms: max_tokens always, `stop` as stop_sequences, thinking enabled with its budget. */
function wireParams(params: Record<string, unknown>): { max_tokens: number } & Record<string, unknown> {
  const { stream: _stream, max_tokens: maxTokens, stop, thinking, ...rest } = params;
  const budget = isRecord(thinking) && typeof thinking.budget_tokens === "number" ? thinking.budget_tokens : undefined;
  return {
    max_tokens: anthropicMaxTokens(typeof maxTokens === "number" ? maxTokens : undefined, budget),
    ...rest,
    ...(stop !== undefined ? { stop_sequences: Array.isArray(stop) ? stop : [stop] } : {}),
    ...(budget !== undefined ? { thinking: { type: "enabled", budget_tokens: budget } } : {}),
  };
}

/**
 * The system messages before the conversation are the `system` blocks. A system message after it
 * (a context block placed after the journal) stays where it is, as user text: Anthropic has one
 * system prompt, and moving a block that changes every iteration in front of the conversation
 * would make the whole conversation miss the cache. Consecutive messages of one role become one
 * message of blocks, in their order: tool results first, as the journal puts them right after their calls.
 */
function toWireConversation(messages: readonly ChatMessage[]): Omit<CachedParts, "tools"> {
  const system: Block[] = [];
  const groups: Group[] = [];
  for (const message of messages) {
    if (message.role === "system" && groups.length === 0) {
      system.push(...blocksOf(message));
      continue;
    }
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    let last = groups.at(-1);
    if (last?.role !== role) groups.push((last = { role, members: [], blocks: 0, stableBlocks: 0 }));
    last.members.push(message);
    last.blocks += blocks.length;
    // A system message after the conversation's start is a context block, read again every iteration.
    if (message.role !== "system") last.stableBlocks = last.blocks;
  }
  return { system, messages: groups.map(wireMessage), stableBlocks: groups.map((group) => group.stableBlocks) };
}

/** Consecutive messages that become one wire message. */
interface Group {
  role: WireMessage["role"];
  members: ChatMessage[];
  blocks: number;
  stableBlocks: number;
}

// Wire forms kept per message object, never changed once made (cache marks go on copies): the
// journal's messages are the same objects every iteration, so an earlier turn's wire message is
// the same object too and wire-json.ts serializes it once per run, not once per request.
const messageBlocks = new WeakMap<ChatMessage, Block[]>();
const groupWire = new WeakMap<ChatMessage, { members: ChatMessage[]; wire: WireMessage }>();
const toolWire = new WeakMap<FunctionTool, Block>();

function blocksOf(message: ChatMessage): Block[] {
  let blocks = messageBlocks.get(message);
  if (blocks === undefined) {
    blocks = freshBlocks(message);
    messageBlocks.set(message, blocks);
  }
  return blocks;
}

function freshBlocks(message: ChatMessage): Block[] {
  switch (message.role) {
    case "system":
    case "user":
      return textBlocks(message.content);
    case "tool":
      // An empty result goes without content: an empty text block is refused.
      return [{ type: "tool_result", tool_use_id: message.tool_call_id, ...(message.content === "" ? {} : { content: message.content }) }];
    case "assistant":
      return assistantBlocks(message);
  }
}

function wireMessage(group: Group): WireMessage {
  const kept = groupWire.get(group.members[0]!);
  if (kept !== undefined && kept.members.length === group.members.length && kept.members.every((member, index) => member === group.members[index])) return kept.wire;
  const wire: WireMessage = { role: group.role, content: group.members.flatMap(blocksOf) };
  groupWire.set(group.members[0]!, { members: group.members, wire });
  return wire;
}

function wireTool(tool: FunctionTool): Block {
  let wire = toolWire.get(tool);
  if (wire === undefined) {
    wire = { name: tool.function.name, description: tool.function.description, input_schema: tool.function.parameters };
    toolWire.set(tool, wire);
  }
  return wire;
}

function textBlocks(text: string): Block[] {
  return text === "" ? [] : [{ type: "text", text }];
}

/** The blocks of a reply in the order they came: thinking (with its signature) and redacted_thinking as they were, the text and each tool call where their places say. */
function assistantBlocks(message: AssistantMessage): Block[] {
  return partsInReplyOrder(message, anthropicData(message)?.content ?? [], {
    text: "text",
    call: "tool_use",
    callId: (place) => place.id,
    toText: (text) => ({ type: "text", text }),
    toCall: toolUse,
  });
}

/** `input` must be an object: arguments the model wrote as invalid JSON (a reply cut off mid-call) go back as `{}`; the tool's result already said they were unusable. */
function toolUse(call: ToolCall): Block {
  let input: unknown;
  try {
    input = JSON.parse(call.arguments);
  } catch {
    input = undefined;
  }
  return { type: "tool_use", id: call.id, name: call.name, input: isRecord(input) ? input : {} };
}
