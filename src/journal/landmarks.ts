// The few events a reader looks up in a journal it does not hold: the first and last, each process's ENGINE_START, the last ENGINE_END.
import type { EventOf, JournalEvent } from "./events.js";
import type { EventFold } from "./fold.js";

export interface Landmarks {
  first: JournalEvent | null;
  last: JournalEvent | null;
  /** Events seen: the next seq is this + 1. */
  count: number;
  /** Every ENGINE_START, one per process that ran the run: a handful, whatever the journal's size. */
  starts: EventOf<"ENGINE_START">[];
  /** The last ENGINE_END, and whether it came after the last ENGINE_START (that process ended). */
  lastEnd: EventOf<"ENGINE_END"> | null;
  lastProcessEnded: boolean;
}

export const landmarksFold: EventFold<Landmarks> = {
  initial: () => ({ first: null, last: null, count: 0, starts: [], lastEnd: null, lastProcessEnded: false }),
  step(marks, event) {
    marks.first ??= event;
    marks.last = event;
    marks.count += 1;
    switch (event.type) {
      case "ENGINE_START":
        marks.starts.push(event);
        marks.lastProcessEnded = false;
        break;
      case "ENGINE_END":
        marks.lastEnd = event;
        marks.lastProcessEnded = true;
        break;
      case "THOUGHT":
      case "ACTION_REQUEST":
      case "USER_MESSAGE":
      case "ACTION_RESULT":
      case "LLM_ATTEMPT_FAILED":
      case "HUMAN_INPUT_REQUEST":
      case "HUMAN_INPUT_RECEIVED":
      case "ERROR":
      case "CONTEXT_WINDOW":
      case "HOOK_RESULT":
      case "REPLAY_DIVERGED":
      case "MODEL_QUEUED":
      case "MODEL_SUBMITTED":
        break;
      default: {
        const unknown: never = event;
        throw new Error(`journal landmarks: unhandled event ${JSON.stringify(unknown)}`);
      }
    }
    return marks;
  },
};
