// provider_data of an Anthropic reply: its content blocks in order, thinking blocks whole (signatures and all), text and tool calls as places only.
import type { AssistantMessage } from "../../conversation.js";
import type { ProviderData } from "../../journal/events.js";
import { isRecord } from "../is-record.js";

export const PROTOCOL = "anthropic";

/**
 * `content` lists the reply's blocks in the order they came. A `thinking`, `redacted_thinking`
 * or any other block is kept whole and goes back unchanged; a `text` block is `{"type":"text"}`
 * and a `tool_use` block `{"type":"tool_use","id":…}`: their text and input are the THOUGHT's
 * content and tool_calls, so the journal holds them once.
 */
export interface AnthropicProviderData extends ProviderData {
  protocol: typeof PROTOCOL;
  content: Record<string, unknown>[];
}

/** The place a block of the THOUGHT takes in `content`, or the block itself when it is kept whole. */
export function blockPlace(block: Record<string, unknown>): Record<string, unknown> {
  if (block.type === "text") return { type: "text" };
  if (block.type === "tool_use") return { type: "tool_use", id: block.id };
  return block;
}

/** True for a block that `blockPlace` keeps whole: worth journaling as provider_data. */
export function isKeptWhole(block: Record<string, unknown>): boolean {
  return block.type !== "text" && block.type !== "tool_use";
}

/** A message's provider_data when an Anthropic reply made it, keeping only blocks of the documented shape: a journal is untrusted input. */
export function anthropicData(message: AssistantMessage): AnthropicProviderData | undefined {
  const data = message.provider_data;
  if (data?.protocol !== PROTOCOL || !Array.isArray(data.content)) return undefined;
  return { protocol: PROTOCOL, content: data.content.filter((block): block is Record<string, unknown> => isRecord(block) && typeof block.type === "string") };
}
