// Folds a growing journal incrementally: each call folds only the events appended since the last call that saw the same journal.
import type { JournalEvent } from "../journal/events.js";

export interface Folded<T> {
  count: number;
  last: JournalEvent;
  value: T;
}

/**
 * A fold of `events` with `step`, from `initial`. The reader hands back the same event objects
 * every iteration, so a journal is known by its first event: when the events up to the last one
 * folded are those objects still, only the new ones are folded. `cache` is the fold's own.
 */
export function foldJournal<T>(events: readonly JournalEvent[], cache: WeakMap<JournalEvent, Folded<T>>, initial: T, step: (value: T, event: JournalEvent) => T): T {
  const head = events[0];
  if (head === undefined) return initial;
  const known = cache.get(head);
  const resume = known !== undefined && known.count <= events.length && events[known.count - 1] === known.last;
  let value = resume ? known.value : initial;
  for (let index = resume ? known.count : 0; index < events.length; index += 1) value = step(value, events[index]!);
  cache.set(head, { count: events.length, last: events[events.length - 1]!, value });
  return value;
}

