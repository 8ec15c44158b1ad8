// The one incremental fold: each registered fold sees each event once, in order; a journal read again from its start is folded anew.
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { createFoldTracker, type EventFold } from "../../src/journal/fold.js";

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
  it("steps every registered fold with each event it is shown, once, in order", () => {
    const tracker = createFoldTracker();
    const first = recordingFold();
    const second = recordingFold();
    const firstState = tracker.register(first);
    const secondState = tracker.register(second);
    for (const event of events) tracker.see(event);
    expect(first.steps).toEqual([1, 2, 3, 4, 5, 6]);
    expect(second.steps).toEqual([1, 2, 3, 4, 5, 6]);
    expect(firstState()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(secondState()).toEqual(firstState());
  });

  it("starts every fold over on reset (the journal read again from its start)", () => {
    const tracker = createFoldTracker();
    const fold = recordingFold();
    const state = tracker.register(fold);
    for (const event of events.slice(0, 4)) tracker.see(event);
    tracker.reset();
    for (const event of events.slice(0, 2)) tracker.see(event);
    expect(state()).toEqual([1, 2]);
    expect(fold.steps).toEqual([1, 2, 3, 4, 1, 2]);
  });

  it("refuses a fold registered after events were seen: it would miss them", () => {
    const tracker = createFoldTracker();
    tracker.register(recordingFold());
    tracker.see(events[0]!);
    expect(() => tracker.register(recordingFold())).toThrow(/registered after the tracker has seen events/);
  });
});
