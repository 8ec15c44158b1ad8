// An Anthropic Messages reply as an LlmReply: text and tool_use blocks, thinking as reasoning, the blocks' order and signatures kept to go back.
import { z } from "zod";
import type { LlmReply } from "../../conversation.js";
import type { ToolCall } from "../../journal/events.js";
import { isRecord } from "../is-record.js";
import { checkNotEmpty, ErrorBodyError, parsedReply, UnusableReplyError } from "../reply-errors.js";
import { serverWords } from "../server-words.js";
import { blockPlace, isKeptWhole, PROTOCOL, type AnthropicProviderData } from "./provider-data.js";

const MessageSchema = z.looseObject({
  model: z.string().nullable().optional(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullable().optional(),
});

const ToolUseSchema = z.looseObject({ id: z.string().min(1), name: z.string().min(1), input: z.unknown() });

/** An `{"type":"error","error":{…}}` body as the error it carries (its type the code the protocol's error table reads). */
export function errorBodyError(body: unknown): ErrorBodyError | undefined {
  const words = serverWords(body);
  return words ? new ErrorBodyError(words) : undefined;
}

export function toLlmReply(body: unknown, requestedModel: string): Omit<LlmReply, "usage"> {
  if (isRecord(body) && body.type === "error") throw errorBodyError(body) ?? new UnusableReplyError("the reply is an error without a message");
  const message = parsedReply(MessageSchema, body, "a message");
  // The blocks as they came, not as the schema rebuilt them: a kept block goes back byte for byte, its keys in their order.
  const blocks = (body as { content: Record<string, unknown>[] }).content;
  const texts: string[] = [];
  const thinking: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of blocks) {
    if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
    else if (block.type === "thinking" && typeof block.thinking === "string") thinking.push(block.thinking);
    else if (block.type === "tool_use") toolCalls.push(toToolCall(block));
  }
  const content = texts.length > 0 ? texts.join("") : null;
  const finishReason = message.stop_reason ?? null;
  checkNotEmpty(content, toolCalls.length, finishReason, `stop_reason: ${finishReason ?? "none"}`);
  const providerData: AnthropicProviderData | undefined = blocks.some(isKeptWhole) ? { protocol: PROTOCOL, content: blocks.map(blockPlace) } : undefined;
  return {
    content,
    tool_calls: toolCalls,
    model: message.model || requestedModel,
    finish_reason: finishReason,
    ...(thinking.length > 0 ? { reasoning: thinking.join("\n\n") } : {}),
    ...(providerData ? { provider_data: providerData } : {}),
  };
}

/** `input` is an object in a whole reply; a stream cut inside a call leaves the JSON text it had, which goes on as it is. */
function toToolCall(block: Record<string, unknown>): ToolCall {
  const parsed = ToolUseSchema.safeParse(block);
  if (!parsed.success) throw new UnusableReplyError("the reply has a tool_use block without an id or a name");
  const { id, name, input } = parsed.data;
  return { id, name, arguments: typeof input === "string" ? input : JSON.stringify(input ?? {}) };
}
