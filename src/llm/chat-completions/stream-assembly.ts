// Puts a streamed Chat Completions reply back together: the deltas of chunks become one completion, read like a whole reply.
import { isRecord } from "../is-record.js";
import { ErrorBodyError, eventJson, eventJsonOrNull, UnusableReplyError } from "../reply-errors.js";
import { serverWords } from "../server-words.js";
import type { SseEvent } from "../transport/sse.js";
import type { StreamAssembler } from "../attempt.js";

interface ToolCallSlot {
  fields: Record<string, unknown>;
  name: string | undefined;
  arguments: string;
  argumentsObject: Record<string, unknown> | undefined;
}

type ContentPiece = { text: string } | { part: unknown };

/**
 * Feed it each event; `result()` then gives `{model, choices: [{message, finish_reason}], usage}`.
 * Text fields of the delta are concatenated, lists appended, other fields take their last value.
 * Tool calls are gathered by `index`; a delta call without one is a whole call of its own
 * (Mistral, Ollama, Gemini). `content` may arrive as text or as lists of parts (Mistral's thinking).
 */
export class StreamAssembly implements StreamAssembler {
  #model: string | undefined;
  #finishReason: string | null = null;
  #usage: unknown;
  #message: Record<string, unknown> = {};
  #content: ContentPiece[] = [];
  #calls: ToolCallSlot[] = [];
  #byIndex = new Map<number, ToolCallSlot>();
  #chunks = 0;

  push({ data }: SseEvent): void {
    if (data.trim() === "[DONE]") return;
    const chunk = eventJson(data);
    if (!isRecord(chunk)) return;
    this.#chunks += 1;
    if (typeof chunk.model === "string" && chunk.model !== "") this.#model ??= chunk.model;
    // Groq also puts the usage in x_groq, where it is the only one when include_usage was not honoured.
    const usage = chunk.usage ?? (isRecord(chunk.x_groq) ? chunk.x_groq.usage : undefined);
    if (usage !== undefined && usage !== null) this.#usage = usage;
    const words = chunk.error !== undefined ? serverWords(chunk) : undefined;
    // An error after the reply's finish is a trailer (OpenRouter repeats the cut-off as one); before it, the reply failed.
    if (words && this.#finishReason === null) throw new ErrorBodyError(words);
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((entry) => isRecord(entry) && (entry.index ?? 0) === 0) : undefined;
    if (!isRecord(choice)) return;
    if (typeof choice.finish_reason === "string") this.#finishReason = choice.finish_reason;
    if (isRecord(choice.delta)) this.#mergeDelta(choice.delta);
  }

  result(): unknown {
    if (this.#chunks === 0) throw new UnusableReplyError("the stream ended without a single chunk");
    const content = this.#assembledContent();
    const toolCalls = this.#calls.map((slot) => ({
      ...slot.fields,
      function: { ...(isRecord(slot.fields.function) ? slot.fields.function : {}), name: slot.name, arguments: slot.argumentsObject ?? slot.arguments },
    }));
    return {
      ...(this.#model ? { model: this.#model } : {}),
      choices: [{ message: { ...this.#message, content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }, finish_reason: this.#finishReason }],
      ...(this.#usage !== undefined ? { usage: this.#usage } : {}),
    };
  }

  #mergeDelta(delta: Record<string, unknown>): void {
    for (const [name, value] of Object.entries(delta)) {
      if (value === null || value === undefined) continue;
      if (name === "content") this.#pushContent(value);
      else if (name === "tool_calls" && Array.isArray(value)) value.forEach((call) => this.#mergeToolCall(call));
      else this.#message[name] = merged(this.#message[name], value, name);
    }
  }

  #pushContent(value: unknown): void {
    if (typeof value === "string") {
      if (value !== "") this.#content.push({ text: value });
    } else if (Array.isArray(value)) {
      for (const part of value) this.#content.push({ part });
    }
  }

  #mergeToolCall(call: unknown): void {
    if (!isRecord(call)) return;
    const index = typeof call.index === "number" ? call.index : undefined;
    let slot = index === undefined ? undefined : this.#byIndex.get(index);
    if (!slot) {
      slot = { fields: {}, name: undefined, arguments: "", argumentsObject: undefined };
      this.#calls.push(slot);
      if (index !== undefined) this.#byIndex.set(index, slot);
    }
    for (const [name, value] of Object.entries(call)) {
      if (value === null || value === undefined || name === "index") continue;
      if (name === "function" && isRecord(value)) {
        // A name comes whole in one delta; a server that repeats it in every delta does not make it longer.
        if (typeof value.name === "string" && value.name !== "" && value.name !== slot.name) slot.name = (slot.name ?? "") + value.name;
        if (typeof value.arguments === "string") slot.arguments += value.arguments;
        else if (isRecord(value.arguments)) slot.argumentsObject = value.arguments;
        continue;
      }
      if (name === "id" && (value === "" || slot.fields.id !== undefined)) continue;
      slot.fields[name] = merged(slot.fields[name], value, name);
    }
  }

  /** Text alone stays text; with other parts (thinking), adjacent pieces of one kind are joined into one part each. */
  #assembledContent(): unknown {
    if (this.#content.every((piece) => "text" in piece)) {
      return this.#content.length === 0 ? null : this.#content.map((piece) => (piece as { text: string }).text).join("");
    }
    const parts: Record<string, unknown>[] = [];
    for (const piece of this.#content) {
      const part = "text" in piece ? { type: "text", text: piece.text } : piece.part;
      if (!isRecord(part)) continue;
      const last = parts.at(-1);
      if (last && last.type === part.type && part.type === "text" && typeof part.text === "string") {
        last.text = `${String(last.text)}${part.text}`;
      } else if (last && last.type === "thinking" && part.type === "thinking" && Array.isArray(last.thinking) && Array.isArray(part.thinking)) {
        last.thinking = joinTextChunks([...last.thinking, ...part.thinking]);
      } else {
        parts.push({ ...part, ...(part.type === "thinking" && Array.isArray(part.thinking) ? { thinking: joinTextChunks(part.thinking) } : {}) });
      }
    }
    return parts;
  }
}

/** Text chunks of a thinking part joined into one, as a whole reply sends them. */
function joinTextChunks(chunks: unknown[]): unknown[] {
  if (!chunks.every((chunk) => isRecord(chunk) && chunk.type === "text" && typeof chunk.text === "string")) return chunks;
  return [{ type: "text", text: chunks.map((chunk) => (chunk as { text: string }).text).join("") }];
}

/** Delta fields that stream text in pieces; any other string (role, Groq's channel) is repeated whole and keeps its last value. */
const STREAMED_TEXT = new Set(["reasoning_content", "reasoning", "refusal", "text", "summary", "data"]);

function merged(previous: unknown, next: unknown, name: string): unknown {
  if (typeof previous === "string" && typeof next === "string") return STREAMED_TEXT.has(name) ? previous + next : next;
  if (Array.isArray(previous) && Array.isArray(next)) return mergedList(previous, next);
  return next;
}

/** Lists append; entries that carry the same `index` (OpenRouter's reasoning_details) are one entry streamed in pieces. */
function mergedList(previous: unknown[], next: unknown[]): unknown[] {
  const list = [...previous];
  for (const entry of next) {
    const same = isRecord(entry) && typeof entry.index === "number" ? list.find((old) => isRecord(old) && old.index === entry.index) : undefined;
    if (!isRecord(same) || !isRecord(entry)) {
      list.push(entry);
      continue;
    }
    for (const [name, value] of Object.entries(entry)) if (value !== null && value !== undefined) same[name] = merged(same[name], value, name);
  }
  return list;
}

/** The reply text one chunk adds (its first choice's `delta.content` as text), for a live view; the assembly above is what counts. */
export function chatTextDelta({ data }: SseEvent): string | undefined {
  if (data.trim() === "[DONE]") return undefined;
  const chunk = eventJsonOrNull(data);
  const choice = isRecord(chunk) && Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  const content = isRecord(choice) && isRecord(choice.delta) ? choice.delta.content : undefined;
  return typeof content === "string" ? content : undefined;
}
