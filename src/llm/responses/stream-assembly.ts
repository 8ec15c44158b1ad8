// Puts a streamed OpenAI Responses reply back together: the response its final event carries, or, when that lists no output, the items each output_item.done event gave.
import type { StreamAssembler } from "../attempt.js";
import { isRecord } from "../is-record.js";
import { eventJson, eventJsonOrNull, UnusableReplyError } from "../reply-errors.js";
import type { SseEvent } from "../transport/sse.js";
import { responseError } from "./response-reply.js";

const FINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed"]);

/**
 * The text and argument deltas need no assembling: every item arrives whole in its
 * `response.output_item.done`, and the final event (`response.completed`, `.incomplete` or
 * `.failed`) carries the whole response. An `error` event is the error it carries.
 */
export class StreamAssembly implements StreamAssembler {
  #response: Record<string, unknown> | undefined;
  #final = false;
  #items = new Map<number, unknown>();

  push({ data }: SseEvent): void {
    const event = eventJson(data);
    if (!isRecord(event) || typeof event.type !== "string") return;
    if (event.type === "error") throw responseError(event) ?? new UnusableReplyError("the stream sent an error without a message");
    if (event.type === "response.output_item.done" && typeof event.output_index === "number") this.#items.set(event.output_index, event.item);
    if (isRecord(event.response) && (event.type === "response.created" || FINAL_EVENTS.has(event.type))) {
      this.#response = event.response;
      this.#final ||= FINAL_EVENTS.has(event.type);
    }
  }

  result(): unknown {
    if (!this.#response || !this.#final) throw new UnusableReplyError("the stream ended before the response was complete");
    const output = this.#response.output;
    if (Array.isArray(output) && output.length > 0) return this.#response;
    return { ...this.#response, output: [...this.#items.entries()].sort(([a], [b]) => a - b).map(([, item]) => item) };
  }
}

/** The reply text one event adds (`response.output_text.delta`), for a live view; the assembly above is what counts. */
export function responsesTextDelta({ data }: SseEvent): string | undefined {
  const event = eventJsonOrNull(data);
  if (!isRecord(event) || event.type !== "response.output_text.delta") return undefined;
  return typeof event.delta === "string" ? event.delta : undefined;
}
