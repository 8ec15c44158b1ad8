// A Chat Completions reply as an LlmReply: every shape real servers send (content parts, number ids, reasoning fields, extras to send back).
import { z } from "zod";
import type { LlmReply } from "../../conversation.js";
import type { ToolCall } from "../../journal/events.js";
import { isRecord } from "../is-record.js";
import { checkNotEmpty, ErrorBodyError, parsedReply, UnusableReplyError } from "../reply-errors.js";
import { serverWords } from "../server-words.js";
import { PROTOCOL, type ChatProviderData } from "./request-body.js";

// Servers that speak "OpenAI-compatible" vary; accept what can be used and name what cannot.
const WireToolCallSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).optional().nullable(),
  function: z.looseObject({
    name: z.string().min(1),
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional().nullable(),
  }),
});

const WireMessageSchema = z.looseObject({
  content: z.union([z.string(), z.array(z.unknown())]).nullable().optional(),
  tool_calls: z.array(WireToolCallSchema).nullable().optional(),
  refusal: z.string().nullable().optional(),
});

const WireCompletionSchema = z.object({
  model: z.string().optional().nullable(),
  choices: z
    .array(z.object({ message: WireMessageSchema, finish_reason: z.string().nullable().optional() }))
    .optional()
    .nullable(),
});

type WireMessage = z.infer<typeof WireMessageSchema>;

/** Message fields that are ours to read (role, content, tool calls) or that a server only sends (refusal, annotations…): never sent back. */
const NOT_ECHOED = new Set(["role", "content", "tool_calls", "refusal", "annotations", "audio", "function_call", "channel"]);
const TOOL_CALL_FIELDS = new Set(["id", "type", "function", "index"]);
/** Where servers put reasoning text: DeepSeek, Kimi, llama.cpp, xAI, Z.ai use the first; Groq, OpenRouter, Ollama, Cerebras the second. */
const REASONING_FIELDS = ["reasoning_content", "reasoning"] as const;

export function toLlmReply(completion: unknown, requestedModel: string): Omit<LlmReply, "usage"> {
  const words = serverWords(completion);
  if (words && !hasChoices(completion)) throw new ErrorBodyError(words);
  const parsed = parsedReply(WireCompletionSchema, completion, "a chat completion");
  const choice = parsed.choices?.[0];
  if (!choice) throw new UnusableReplyError("the reply has no choices");
  const message = choice.message;
  const parts = readContent(message.content);
  const toolCalls = (message.tool_calls ?? []).map(toToolCall);
  const refusal = message.refusal && parts.text === null && toolCalls.length === 0 ? message.refusal : undefined;
  // OpenAI says a refusal in its own field while finish_reason stays "stop": journal it as what it is.
  const finishReason = refusal !== undefined ? "refusal" : (choice.finish_reason ?? null);
  const content = refusal ?? parts.text;
  const reasoningField = REASONING_FIELDS.find((field) => typeof message[field] === "string");
  const reasoning = reasoningField ? (message[reasoningField] as string) : parts.thinking;
  // A reply cut off or filtered before any text is still a reply: the engine reports it as such.
  checkNotEmpty(content, toolCalls.length, finishReason, `finish_reason: ${finishReason ?? "none"}`);
  const providerData = providerDataOf(message, reasoningField, parts.keepParts ? (message.content as unknown[]) : undefined);
  return {
    content,
    tool_calls: toolCalls,
    model: parsed.model || requestedModel,
    finish_reason: finishReason,
    ...(reasoning !== undefined ? { reasoning } : {}),
    ...(providerData ? { provider_data: providerData } : {}),
  };
}

function hasChoices(body: unknown): boolean {
  return typeof body === "object" && body !== null && Array.isArray((body as { choices?: unknown }).choices);
}

interface ContentParts {
  text: string | null;
  thinking: string | undefined;
  /** The parts carry more than text (thinking), so they go back as they came. */
  keepParts: boolean;
}

/** Text content, or an array of parts (Mistral Magistral: `thinking` and `text` parts) read as text and reasoning. */
function readContent(content: WireMessage["content"]): ContentParts {
  if (!Array.isArray(content)) return { text: content ?? null, thinking: undefined, keepParts: false };
  const text: string[] = [];
  const thinking: string[] = [];
  let other = false;
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === "thinking" || part.type === "reasoning") {
      thinking.push(partText(part.thinking ?? part.reasoning ?? part.text));
    } else if (typeof part.text === "string" && (part.type === undefined || part.type === "text" || part.type === "output_text")) {
      text.push(part.text);
    } else {
      other = true;
    }
  }
  return { text: text.length > 0 ? text.join("") : null, thinking: thinking.length > 0 ? thinking.join("\n\n") : undefined, keepParts: thinking.length > 0 || other };
}

/** A thinking part's text: a string, or (Mistral) a list of text chunks. */
function partText(value: unknown): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return "";
  return value.map((chunk) => (isRecord(chunk) && typeof chunk.text === "string" ? chunk.text : "")).join("");
}

function toToolCall(call: z.infer<typeof WireToolCallSchema>): ToolCall {
  const args = call.function.arguments;
  // TGI 2.0 numbers its calls; Gemini and some local servers send "" or nothing, and the journal needs an id to pair a call with its result.
  const id = typeof call.id === "number" ? String(call.id) : call.id || `call_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  return { id, name: call.function.name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) };
}

function providerDataOf(message: WireMessage, reasoningField: string | undefined, parts: unknown[] | undefined): ChatProviderData | undefined {
  const data: ChatProviderData = { protocol: PROTOCOL };
  const extras = extraFields(message, (name) => NOT_ECHOED.has(name) || name === reasoningField);
  if (extras) data.message = extras;
  if (reasoningField) data.reasoning_field = reasoningField;
  if (parts) data.content = parts;
  const callExtras = (message.tool_calls ?? []).map((call) => extraFields(call, (name) => TOOL_CALL_FIELDS.has(name)));
  if (callExtras.some((extras) => extras !== null)) data.tool_calls = callExtras;
  return Object.keys(data).length > 1 ? data : undefined;
}

/** The fields not skipped and not null, or null when there are none. */
function extraFields(record: Record<string, unknown>, skip: (name: string) => boolean): Record<string, unknown> | null {
  const extras: Record<string, unknown> = {};
  let found = false;
  for (const [name, value] of Object.entries(record)) {
    if (skip(name) || value === null || value === undefined) continue;
    extras[name] = value;
    found = true;
  }
  return found ? extras : null;
}
