// The part of a journal the next request can still show, kept as it is read: every event but those of the iterations before the context window's first.
//
// The window's first iteration only moves forward, and every move is journaled (CONTEXT_WINDOW),
// so an iteration left behind by the last move is never shown again: a run's reader keeps user
// messages, events without an iteration (ENGINE_START, ENGINE_END) and the iterations from the
// window on, and `continue` of a journal of any size holds what one request shows, not the run.
import type { JournalEvent } from "./events.js";
import type { RunState } from "./run-state.js";
import type { WindowState } from "./window-state.js";

/** What the context is built from: the events kept, and the window state of the whole journal (which they alone could not give). */
export interface ShownJournal {
  /** In journal order: every USER_MESSAGE and event without an iteration, and every event of the iterations from `window.first` on. */
  events: readonly JournalEvent[];
  window: WindowState;
  /** The run's state as the same read folds it: the iteration these events number next, without a read of its own. */
  state: RunState;
}

/** Whether an event can still be shown, or decide anything, once the window starts at `first`: user messages and the run's own events carry no iteration. */
function isShown(event: JournalEvent, first: number): boolean {
  return !("iteration" in event) || event.iteration >= first;
}

interface ShownEvents {
  /** Keeps `event` if it can be shown under `first`, the window state after it; a window that moved drops what it left behind. */
  add(event: JournalEvent, first: number): void;
  clear(): void;
  /** The events kept: the same array while the journal grows (a caller must not change it). */
  events(): readonly JournalEvent[];
}

export function createShownEvents(): ShownEvents {
  let kept: JournalEvent[] = [];
  let keptFirst = 1;
  return {
    add(event, first) {
      if (first > keptFirst) {
        // The window moved: one pass over what was kept, once per move.
        kept = kept.filter((shown) => isShown(shown, first));
        keptFirst = first;
      }
      if (isShown(event, keptFirst)) kept.push(event);
    },
    clear() {
      kept = [];
      keptFirst = 1;
    },
    events: () => kept,
  };
}
