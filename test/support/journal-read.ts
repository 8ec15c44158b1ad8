// The whole journal in hand, for tests: its events as one array, and the run state they fold to. The engine itself streams (journal/reader.ts).
import { createJournalReader } from "../../src/journal/reader.js";
import type { JournalEvent } from "../../src/journal/events.js";
import { createFoldTracker } from "../../src/journal/fold.js";
import { trackRunState, type RunState } from "../../src/journal/run-state.js";

export function readJournal(path: string, options: Parameters<typeof createJournalReader>[1] = {}): JournalEvent[] {
  return createJournalReader(path, options).read();
}

export function deriveRunState(events: readonly JournalEvent[]): RunState {
  const tracker = createFoldTracker();
  const state = trackRunState(tracker);
  tracker.advance(events);
  return state();
}
