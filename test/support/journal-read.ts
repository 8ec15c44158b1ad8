// The whole journal in hand, for tests: its events as one array, the run state they fold to, and the context's view of them. The engine itself streams (journal/reader.ts) and keeps only what a request can show (journal/shown-journal.ts).
import { createJournalReader, type JournalReader } from "../../src/journal/reader.js";
import type { JournalEvent } from "../../src/journal/events.js";
import { createFoldTracker } from "../../src/journal/fold.js";
import { trackRunState, type RunState } from "../../src/journal/run-state.js";
import type { ShownJournal } from "../../src/journal/shown-journal.js";
import { windowFold } from "../../src/journal/window-state.js";

type ReaderOptions = Parameters<typeof createJournalReader>[1];

/** An incremental reader whose reads return every event now in the file (what a sink that keeps all of them holds). */
export function holdingReader(path: string, options: ReaderOptions = {}): Omit<JournalReader, "read"> & { read(options?: { quiet?: boolean; fromStart?: boolean }): JournalEvent[] } {
  const reader = createJournalReader(path, options);
  let held: JournalEvent[] = [];
  return {
    ...reader,
    read(how = {}) {
      const unterminated = reader.read({ restart: () => void (held = []), event: (event) => void held.push(event) }, how);
      return unterminated ? [...held, unterminated] : [...held];
    },
  };
}

export function readJournal(path: string, options: ReaderOptions = {}): JournalEvent[] {
  return holdingReader(path, options).read();
}

export function deriveRunState(events: readonly JournalEvent[]): RunState {
  const tracker = createFoldTracker();
  const state = trackRunState(tracker);
  for (const event of events) tracker.see(event);
  return state();
}

/** The context's view of events held whole: all of them, with the window state they fold to. */
export function shownJournalOf(events: readonly JournalEvent[]): ShownJournal {
  let window = windowFold.initial();
  for (const event of events) window = windowFold.step(window, event);
  return { events, window, state: deriveRunState(events) };
}
