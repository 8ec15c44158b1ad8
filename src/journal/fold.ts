// The one incremental fold of a journal: folds (an initial state and a step) registered on a tracker see each event once, in order.
//
// Run state, usage totals, landmarks and the context window's state are folds; a tracker applies
// them to the events as they are read, so a growing journal is folded once in all, never once per
// question asked of it. No fold keeps the events themselves: the journal is fed to a tracker one
// event at a time as it is read (streamed), and nothing needs it held.
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
  /** Starts every fold over (the journal is read again from its start). */
  reset(): void;
  /** Folds one more event: the journal is fed to a tracker one event at a time, as it is read, never held. */
  see(event: JournalEvent): void;
}

interface Registered {
  fold: EventFold<unknown>;
  state: unknown;
}

export function createFoldTracker(): FoldTracker {
  const registered: Registered[] = [];
  let count = 0;

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
    reset() {
      for (const entry of registered) entry.state = entry.fold.initial();
      count = 0;
    },
    see(event) {
      step(event);
      count += 1;
    },
  };
}
