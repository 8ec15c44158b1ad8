// provider_data of an OpenAI Responses reply: its output items in order, reasoning items whole (encrypted_content and all), messages and function calls as places only.
import type { AssistantMessage } from "../../conversation.js";
import type { ProviderData } from "../../journal/events.js";
import { isRecord } from "../is-record.js";

export const PROTOCOL = "openai-responses";

/**
 * `output` lists the reply's items in the order they came. A `reasoning` item (with its
 * `encrypted_content`, which `store: false` makes the only copy) or any other item is kept whole
 * and goes back unchanged; a `message` is `{"type":"message"}` with its `phase`, and a
 * `function_call` `{"type":"function_call","call_id":…}`: their text and arguments are the
 * THOUGHT's content and tool_calls, so the journal holds them once.
 */
export interface ResponsesProviderData extends ProviderData {
  protocol: typeof PROTOCOL;
  output: Record<string, unknown>[];
}

/** The place an item of the THOUGHT takes in `output`, or the item itself when it is kept whole. */
export function itemPlace(item: Record<string, unknown>): Record<string, unknown> {
  if (item.type === "message") return { type: "message", ...(typeof item.phase === "string" ? { phase: item.phase } : {}) };
  if (item.type === "function_call") return { type: "function_call", call_id: item.call_id };
  return item;
}

/** True for an item worth journaling as provider_data: one kept whole, or a message whose phase must go back. */
export function needsKeeping(item: Record<string, unknown>): boolean {
  return (item.type !== "message" && item.type !== "function_call") || (item.type === "message" && typeof item.phase === "string");
}

/** A message's provider_data when a Responses reply made it, keeping only items of the documented shape: a journal is untrusted input. */
export function responsesData(message: AssistantMessage): ResponsesProviderData | undefined {
  const data = message.provider_data;
  if (data?.protocol !== PROTOCOL || !Array.isArray(data.output)) return undefined;
  return { protocol: PROTOCOL, output: data.output.filter((item): item is Record<string, unknown> => isRecord(item) && typeof item.type === "string") };
}
