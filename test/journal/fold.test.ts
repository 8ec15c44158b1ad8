// The one incremental fold: each registered fold sees each event once, in order; a journal read afresh is folded anew.
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { createFoldTracker, foldIncrementally, type EventFold } from "../../src/journal/fold.js";

const events: JournalEvent[] = Array.from({ length: 6 }, (_, index) => ({
  seq: index + 1,
  timestamp: "2026-01-01T00:00:00.000Z",
  type: "USER_MESSAGE",
  content: `m${index + 1}`,
}));

/** A fold that records every event it is stepped with, so a test sees how often each was folded. */
function recordingFold(): EventFold<number[]> & { steps: number[] } {
  const steps: number[] = [];
  return {
    steps,
    initial: () => [],
    step: (seen, event) => {
      steps.push(event.seq);
      return [...seen, event.seq];
    },
  };
}

describe("createFoldTracker", () => {
  it("steps every registered fold with each event once, in order, however often the growing journal is given", () => {
    const tracker = createFoldTracker();
    const first = recordingFold();
    const second = recordingFold();
    const firstState = tracker.register(first);
    const secondState = tracker.register(second);
    tracker.advance(events.slice(0, 2));
    tracker.advance(events.slice(0, 2));
    tracker.advance(events.slice(0, 5));
    tracker.advance([...events]);
    expect(first.steps).toEqual([1, 2, 3, 4, 5, 6]);
    expect(second.steps).toEqual([1, 2, 3, 4, 5, 6]);
    expect(firstState()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(secondState()).toEqual(firstState());
  });

  it("folds anew when the journal is no longer the one it saw (other event objects, or fewer)", () => {
    const tracker = createFoldTracker();
    const fold = recordingFold();
    const state = tracker.register(fold);
    tracker.advance(events.slice(0, 4));
    tracker.advance(structuredClone(events.slice(0, 5)));
    expect(state()).toEqual([1, 2, 3, 4, 5]);
    tracker.advance(events.slice(0, 2));
    expect(state()).toEqual([1, 2]);
    expect(fold.steps).toEqual([1, 2, 3, 4, 1, 2, 3, 4, 5, 1, 2]);
  });

  it("refuses a fold registered after events were seen: it would miss them", () => {
    const tracker = createFoldTracker();
    tracker.register(recordingFold());
    tracker.advance(events.slice(0, 1));
    expect(() => tracker.register(recordingFold())).toThrow(/registered after the tracker has seen events/);
  });
});

describe("foldIncrementally", () => {
  it("folds only the events appended since the last call for the same journal, and gives what folding it whole would", () => {
    const fold = recordingFold();
    expect(foldIncrementally(fold, events.slice(0, 3))).toEqual([1, 2, 3]);
    expect(foldIncrementally(fold, [...events])).toEqual(events.map((event) => event.seq));
    expect(fold.steps).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("keeps one tracker per journal: another journal does not disturb the first's", () => {
    const fold = recordingFold();
    const other = structuredClone(events);
    foldIncrementally(fold, events.slice(0, 3));
    foldIncrementally(fold, other.slice(0, 2));
    expect(foldIncrementally(fold, events.slice(0, 4))).toEqual([1, 2, 3, 4]);
    expect(fold.steps).toEqual([1, 2, 3, 1, 2, 4]);
  });
});
