// Puts a streamed Anthropic Messages reply back together: message_start, content blocks and their deltas, message_delta, as the message a whole reply would be.
import type { StreamAssembler } from "../attempt.js";
import { isRecord } from "../is-record.js";
import { eventJson, eventJsonOrNull, UnusableReplyError } from "../reply-errors.js";
import type { SseEvent } from "../transport/sse.js";
import { errorBodyError } from "./message-reply.js";

/**
 * Blocks are gathered by `index`: text_delta, thinking_delta and signature_delta append to their
 * fields, input_json_delta to the call's JSON, parsed when its block stops (left as text when it
 * does not parse: a reply cut off mid-call). message_delta brings the stop_reason and the final
 * usage. An `error` event (overloaded_error mid-stream) is the error it carries.
 */
export class StreamAssembly implements StreamAssembler {
  #message: Record<string, unknown> | undefined;
  #blocks = new Map<number, Record<string, unknown>>();
  #json = new Map<number, string>();
  #stopped = false;

  push({ data }: SseEvent): void {
    const event = eventJson(data);
    if (!isRecord(event)) return;
    switch (event.type) {
      case "error":
        throw errorBodyError(event) ?? new UnusableReplyError("the stream sent an error without a message");
      case "message_start":
        if (isRecord(event.message)) this.#message = { ...event.message };
        return;
      case "content_block_start":
        if (typeof event.index === "number" && isRecord(event.content_block)) this.#blocks.set(event.index, { ...event.content_block });
        return;
      case "content_block_delta":
        this.#delta(event.index, event.delta);
        return;
      case "content_block_stop":
        this.#finishBlock(event.index);
        return;
      case "message_delta":
        this.#messageDelta(event);
        return;
      case "message_stop":
        this.#stopped = true;
        return;
    }
  }

  result(): unknown {
    if (!this.#message) throw new UnusableReplyError("the stream ended without a message_start event");
    if (!this.#stopped && this.#message.stop_reason == null) throw new UnusableReplyError("the stream ended before the message was complete");
    for (const index of this.#json.keys()) this.#finishBlock(index);
    const content = [...this.#blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    return { ...this.#message, content };
  }

  #delta(index: unknown, delta: unknown): void {
    const block = typeof index === "number" ? this.#blocks.get(index) : undefined;
    if (!block || !isRecord(delta) || typeof index !== "number") return;
    switch (delta.type) {
      case "text_delta":
        append(block, "text", delta.text);
        return;
      case "thinking_delta":
        append(block, "thinking", delta.thinking);
        return;
      case "signature_delta":
        append(block, "signature", delta.signature);
        return;
      case "input_json_delta":
        if (typeof delta.partial_json === "string") this.#json.set(index, (this.#json.get(index) ?? "") + delta.partial_json);
        return;
      case "citations_delta":
        if (delta.citation !== undefined) block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
        return;
    }
  }

  #finishBlock(index: unknown): void {
    if (typeof index !== "number") return;
    const json = this.#json.get(index);
    const block = this.#blocks.get(index);
    this.#json.delete(index);
    if (json === undefined || !block) return;
    try {
      block.input = json.trim() === "" ? {} : JSON.parse(json);
    } catch {
      block.input = json;
    }
  }

  #messageDelta(event: Record<string, unknown>): void {
    if (!this.#message) return;
    if (isRecord(event.delta)) {
      for (const [name, value] of Object.entries(event.delta)) if (value !== undefined) this.#message[name] = value;
    }
    // The final usage: output_tokens always, and newer servers repeat the input counts.
    if (isRecord(event.usage)) this.#message.usage = { ...(isRecord(this.#message.usage) ? this.#message.usage : {}), ...withoutNulls(event.usage) };
  }
}

function append(block: Record<string, unknown>, field: string, text: unknown): void {
  if (typeof text === "string") block[field] = `${typeof block[field] === "string" ? block[field] : ""}${text}`;
}

function withoutNulls(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined));
}

/** The reply text one event adds (a `text_delta`), for a live view; the assembly above is what counts. */
export function anthropicTextDelta({ data }: SseEvent): string | undefined {
  const event = eventJsonOrNull(data);
  if (!isRecord(event) || event.type !== "content_block_delta" || !isRecord(event.delta) || event.delta.type !== "text_delta") return undefined;
  return typeof event.delta.text === "string" ? event.delta.text : undefined;
}
