// Rebuilds an earlier reply's parts (Anthropic blocks, Responses items) in the order they came: parts kept whole as they were, the text and each tool call where their places say.
import type { AssistantMessage } from "../conversation.js";
import type { ToolCall } from "../journal/events.js";

type Part = Record<string, unknown>;

interface PartKinds {
  /** The type of a text place (`text`, `message`) and of a call place (`tool_use`, `function_call`). */
  text: string;
  call: string;
  /** The call id a call place names. */
  callId: (place: Part) => unknown;
  /** The part that carries the text, given its place (undefined when the reply had none). */
  toText: (text: string, place: Part | undefined) => Part;
  toCall: (call: ToolCall) => Part;
  /** Whether a part kept whole goes back (default: all). */
  sendsBack?: (part: Part) => boolean;
}

/**
 * `places` come from the message's provider_data (none for a reply of another protocol). The
 * message's content and tool calls are what is sent, wherever they sit: a text without a place
 * goes before the first call, calls without one go last, places of calls the message no longer
 * has are dropped, so a request a hook changed is still sent as changed.
 */
export function partsInReplyOrder(message: AssistantMessage, places: readonly Part[], kinds: PartKinds): Part[] {
  const calls = new Map((message.tool_calls ?? []).map((call) => [call.id, call]));
  const text = message.content ?? "";
  const parts: Part[] = [];
  let textPlaced = false;
  for (const place of places) {
    if (place.type === kinds.text) {
      if (!textPlaced && text !== "") parts.push(kinds.toText(text, place));
      textPlaced = true;
    } else if (place.type === kinds.call) {
      const id = kinds.callId(place);
      const call = typeof id === "string" ? calls.get(id) : undefined;
      if (!call) continue;
      parts.push(kinds.toCall(call));
      calls.delete(call.id);
    } else if (kinds.sendsBack?.(place) ?? true) {
      // The journal event's own object: no request changes a part it sends (cache marks go on copies).
      parts.push(place);
    }
  }
  if (!textPlaced && text !== "") {
    const firstCall = parts.findIndex((part) => part.type === kinds.call);
    parts.splice(firstCall === -1 ? parts.length : firstCall, 0, kinds.toText(text, undefined));
  }
  for (const call of calls.values()) parts.push(kinds.toCall(call));
  return parts;
}
