// Our provider-neutral request as a Chat Completions body, each earlier reply's extras (reasoning, signatures) sent back where the server put them.
import type { AssistantMessage, ChatMessage, LlmRequest } from "../../conversation.js";
import type { ProviderData } from "../../journal/events.js";
import { isRecord } from "../is-record.js";

export const PROTOCOL = "chat-completions";

/**
 * provider_data of a Chat Completions reply: what the server sent beside content and tool calls,
 * so the next request can carry it back unchanged.
 */
export interface ChatProviderData extends ProviderData {
  protocol: typeof PROTOCOL;
  /** Fields of the assistant message beside role, content, tool_calls and the reasoning field (Gemini's extra_content, OpenRouter's reasoning_details…). */
  message?: Record<string, unknown>;
  /** The message field the reasoning text came in (`reasoning_content` or `reasoning`); it goes back under that name. */
  reasoning_field?: string;
  /** The content as the array of parts it came as (Mistral's thinking and text parts); sent back instead of the text. */
  content?: unknown[];
  /** Per tool call, in order: its fields beside id, type, function and index (Gemini 3's extra_content), or null. */
  tool_calls?: (Record<string, unknown> | null)[];
}

export interface BodyOptions {
  stream: boolean;
  /** Send assistant messages without what earlier replies asked to have back: the server refused it. */
  withoutEcho?: boolean;
}

export function toChatCompletionBody(request: LlmRequest, options: BodyOptions): Record<string, unknown> {
  // `stream` and its options are ours to decide, not agent.yaml's.
  const { stream: _stream, stream_options: _streamOptions, ...params } = request.params;
  return {
    ...params,
    model: request.model,
    stream: options.stream,
    ...(options.stream ? { stream_options: { include_usage: true } } : {}),
    // Tools before messages, as the model's prompt has them: each request's bytes then grow at the end only.
    ...(request.tools.length > 0 ? { tools: request.tools } : {}),
    ...(request.output_format ? { response_format: { type: "json_schema", json_schema: request.output_format } } : {}),
    messages: request.messages.map((message) => toWireMessage(message, options.withoutEcho !== true)),
  };
}

// An assistant message's wire form, kept per message object: the same object every iteration then serializes once (wire-json.ts).
const echoedWire = new WeakMap<ChatMessage, Record<string, unknown>>();

function toWireMessage(message: ChatMessage, echo: boolean): Record<string, unknown> {
  if (message.role !== "assistant") return message;
  if (!echo) return assistantWire(message, false);
  let wire = echoedWire.get(message);
  if (wire === undefined) {
    wire = assistantWire(message, true);
    echoedWire.set(message, wire);
  }
  return wire;
}

function assistantWire(message: AssistantMessage, echo: boolean): Record<string, unknown> {
  const data = echo ? chatProviderData(message) : undefined;
  const calls = message.tool_calls ?? [];
  return {
    ...data?.message,
    role: "assistant",
    content: data?.content ?? message.content,
    ...(data?.reasoning_field && message.reasoning !== undefined ? { [data.reasoning_field]: message.reasoning } : {}),
    ...(calls.length > 0
      ? {
          tool_calls: calls.map((call, index) => ({
            ...(data?.tool_calls?.[index] ?? {}),
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: call.arguments },
          })),
        }
      : {}),
  };
}

/** The names of the fields earlier replies' extras put into this request, for recognising a server that refuses them. */
export function echoedFields(request: LlmRequest): Set<string> {
  const names = new Set<string>();
  for (const message of request.messages) {
    if (message.role !== "assistant") continue;
    const data = chatProviderData(message);
    if (!data) continue;
    for (const name of Object.keys(data.message ?? {})) names.add(name);
    if (data.reasoning_field && message.reasoning !== undefined) names.add(data.reasoning_field);
    if (data.content) names.add("content");
    for (const extras of data.tool_calls ?? []) for (const name of Object.keys(extras ?? {})) names.add(name);
  }
  return names;
}

/**
 * A message's provider_data when this protocol made it (another protocol's extras mean nothing
 * here), keeping only parts of the documented shape: a journal is read as untrusted input.
 */
function chatProviderData(message: AssistantMessage): ChatProviderData | undefined {
  const data = message.provider_data;
  if (data?.protocol !== PROTOCOL) return undefined;
  const checked: ChatProviderData = { protocol: PROTOCOL };
  if (isRecord(data.message)) checked.message = data.message;
  if (typeof data.reasoning_field === "string" && data.reasoning_field !== "") checked.reasoning_field = data.reasoning_field;
  if (Array.isArray(data.content)) checked.content = data.content;
  if (Array.isArray(data.tool_calls)) checked.tool_calls = data.tool_calls.map((extras) => (isRecord(extras) ? extras : null));
  return checked;
}
