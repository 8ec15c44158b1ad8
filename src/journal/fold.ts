// The one incremental fold of a journal: folds (an initial state and a step) registered on a tracker see each event once, in order.
//
// Run state, usage totals, the context window's state and the log's conversation tally are folds;
// a tracker applies them to the events as they are read, so a growing journal is folded once in
// all, never once per question asked of it. No fold keeps the events themselves: a journal could
// be fed to a tracker one event at a time (streamed) and every fold would give the same answer.
import type { JournalEvent } from "./events.js";

export interface EventFold<S> {
  /** The state before any event. */
  initial(): S;
  /** The state after `event`; it may change `state` in place and return it. */
  step(state: S, event: JournalEvent): S;
}

export interface FoldTracker {
  /** Adds a fold (before the first event is seen); returns a function that gives its state after the events seen so far. */
  register<S>(fold: EventFold<S>): () => S;
  /**
   * Takes the journal as read now (all of it, as the incremental reader returns it): only the events after those already
   * seen are folded. The reader keeps its event objects while the file only grows, so the last seen event being the same
   * object means every earlier one is too; otherwise (the file was read afresh) every fold starts over.
   */
  advance(events: readonly JournalEvent[]): void;
  /** Folds one more event: for a reader that streams the journal and never holds it (journal/reader.ts's streamJournal). */
  see(event: JournalEvent): void;
}

interface Registered {
  fold: EventFold<unknown>;
  state: unknown;
}

export function createFoldTracker(): FoldTracker {
  const registered: Registered[] = [];
  let count = 0;
  let last: JournalEvent | undefined;

  function step(event: JournalEvent): void {
    for (const entry of registered) entry.state = entry.fold.step(entry.state, event);
  }

  return {
    register<S>(fold: EventFold<S>): () => S {
      if (count > 0) throw new Error("Engine bug: a fold registered after the tracker has seen events would miss them");
      const entry: Registered = { fold: fold as EventFold<unknown>, state: fold.initial() };
      registered.push(entry);
      return () => entry.state as S;
    },
    advance(events) {
      if (events.length < count || (count > 0 && events[count - 1] !== last)) {
        for (const entry of registered) entry.state = entry.fold.initial();
        count = 0;
      }
      for (let index = count; index < events.length; index += 1) step(events[index]!);
      count = events.length;
      last = events[count - 1];
    },
    see(event) {
      step(event);
      count += 1;
      last = event;
    },
  };
}

const trackersByFold = new WeakMap<EventFold<unknown>, WeakMap<JournalEvent, { tracker: FoldTracker; state: () => unknown }>>();

/**
 * The state of `fold` after `events`, for a pure function handed the journal as an array (the context builder): a
 * tracker per fold and journal (known by its first event) folds only what was appended since the last call.
 */
export function foldIncrementally<S>(fold: EventFold<S>, events: readonly JournalEvent[]): S {
  const head = events[0];
  if (head === undefined) return fold.initial();
  let byJournal = trackersByFold.get(fold as EventFold<unknown>);
  if (byJournal === undefined) trackersByFold.set(fold as EventFold<unknown>, (byJournal = new WeakMap()));
  let entry = byJournal.get(head);
  if (entry === undefined) {
    const tracker = createFoldTracker();
    entry = { tracker, state: tracker.register(fold) };
    byJournal.set(head, entry);
  }
  entry.tracker.advance(events);
  return entry.state() as S;
}
