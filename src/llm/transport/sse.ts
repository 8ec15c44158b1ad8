// Server-sent events: the framing of streamed replies, read from chunks as they arrive or from a whole body.
export interface SseEvent {
  /** The `event:` field, when the server named the event. */
  event?: string;
  /** The `data:` lines joined by newlines. */
  data: string;
}

/** Events in arrival order; a chunk may end anywhere, even inside a UTF-8 character or a line. */
export async function* sseEvents(chunks: AsyncIterable<Buffer>): AsyncIterable<SseEvent> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  for await (const chunk of chunks) yield* parser.push(decoder.decode(chunk, { stream: true }));
  yield* parser.push(`${decoder.decode()}\n\n`);
}

/** The events of a body that was read whole. */
export function parseSse(text: string): SseEvent[] {
  return new SseParser().push(`${text}\n\n`);
}

/** True when a body looks like an event stream rather than JSON: its first line is a field or a comment. */
export function looksLikeSse(text: string): boolean {
  return /^\s*(data|event|id|retry)?:/.test(text.slice(0, 64));
}

class SseParser {
  #pending = "";
  #data: string[] = [];
  #event: string | undefined;

  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    const lines = (this.#pending + text).split(/\r\n|\r|\n/);
    // The last piece has no line end yet (a lone \r at the very end could still become \r\n: harmless, it is a line end either way).
    this.#pending = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "") {
        if (this.#data.length > 0) events.push({ ...(this.#event !== undefined ? { event: this.#event } : {}), data: this.#data.join("\n") });
        this.#data = [];
        this.#event = undefined;
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") this.#data.push(value);
      else if (field === "event") this.#event = value;
    }
    return events;
  }
}
