// Lines this process appended, kept until the reader meets them on disk, so it need not parse and validate them again.
//
// The reader still reads every byte from the file: a line is taken from here only when its text
// on disk is exactly what was written, with the seq the reader expects next. Anything else
// (a line changed behind the engine's back, a gap) is parsed and validated as usual.
import type { JournalEvent } from "./events.js";

export interface WrittenLines {
  /** Subscribed to the writer: `line` (without its newline) now holds `event`. */
  remember(event: JournalEvent, line: string): void;
  /** The reader: the event of `line` if this process wrote exactly that line as event `seq`. */
  take(line: string, seq: number): JournalEvent | undefined;
}

export function createWrittenLines(): WrittenLines {
  const queue: { line: string; event: JournalEvent }[] = [];
  return {
    remember(event, line) {
      queue.push({ line, event: deepFreeze(event) });
    },
    take(line, seq) {
      while (queue.length > 0 && queue[0]!.event.seq < seq) queue.shift();
      const head = queue[0];
      if (head === undefined || head.event.seq !== seq || head.line !== line) return undefined;
      queue.shift();
      return head.event;
    },
  };
}

/** The writer's caller and the reader now share the event: neither may change it under the other. Iterative, whatever the depth. */
function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== "object" || current === null || Object.isFrozen(current)) continue;
    Object.freeze(current);
    for (const field of Object.values(current)) pending.push(field);
  }
  return value;
}
