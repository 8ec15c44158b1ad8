// The context window's state a journal leaves: the first iteration shown since the last CONTEXT_WINDOW, a window a server's overflow taught the run, and the calibration of the engine's counts by the provider's.
//
// A fold (fold.ts): the run files fold it on their one read of the journal, and keep only the events
// a request can still show (shown-journal.ts), so the context is handed the state of the whole
// journal beside the events from the window on.
import type { EventFold } from "./fold.js";

/** What earlier builds and model calls left in the journal for this one. */
export interface WindowState {
  /** The first iteration the last CONTEXT_WINDOW event left shown (1 when there is none). */
  first: number;
  /** The window a server's overflow taught the run, in tokens, or null. */
  learnedWindow: number | null;
  /** Factor from the engine's count to the provider's, from the last request both counted (≥ 1). */
  calibration: number;
  /** The last request the engine sized by its bytes alone: its estimate and the provider's count of it, or null. */
  lastEstimate: { estimated: number; reported: number } | null;
}

/** `estimated_by` of a request sized by its bytes alone (context/request-estimate.ts), without a tokenizer. */
export const BYTES_ESTIMATE = "bytes";

/** Calibration never lowers a count (an overflow costs a request) and never trusts a ratio above this. */
export const MAX_CALIBRATION = 4;

const INITIAL_STATE: WindowState = { first: 1, learnedWindow: null, calibration: 1, lastEstimate: null };

/** The window state: the last CONTEXT_WINDOW's first iteration and learned window, the last calibration. */
export const windowFold: EventFold<WindowState> = {
  initial: () => INITIAL_STATE,
  step(state, event) {
    switch (event.type) {
      case "CONTEXT_WINDOW": {
        const requested = event.overflow?.server_requested_tokens;
        const trusted = event.overflow && requested !== undefined ? trustedRatio(requested, event.overflow.sent_estimate) : null;
        return { ...state, first: event.first_iteration, learnedWindow: event.overflow?.window_tokens ?? state.learnedWindow, calibration: trusted ?? state.calibration };
      }
      case "THOUGHT":
        if (event.estimated_input_tokens === undefined || !event.usage || event.usage.input_tokens <= 0) return state;
        if (event.estimated_by === BYTES_ESTIMATE) return { ...state, lastEstimate: { estimated: event.estimated_input_tokens, reported: event.usage.input_tokens } };
        return { ...state, calibration: clampCalibration(event.usage.input_tokens / Math.max(1, event.estimated_input_tokens)) };
      case "ENGINE_START":
      case "USER_MESSAGE":
      case "LLM_ATTEMPT_FAILED":
      case "ACTION_REQUEST":
      case "ACTION_RESULT":
      case "HUMAN_INPUT_REQUEST":
      case "HUMAN_INPUT_RECEIVED":
      case "ERROR":
      case "HOOK_RESULT":
      case "REPLAY_DIVERGED":
      case "MODEL_QUEUED":
      case "MODEL_SUBMITTED":
      case "ENGINE_END":
        return state;
      default: {
        const unknown: never = event;
        throw new Error(`window state: unhandled event ${JSON.stringify(unknown)}`);
      }
    }
  },
};

/** The provider's count over ours, when it is believable: a tokenizer is never off by more than MAX_CALIBRATION either way. */
export function trustedRatio(providerTokens: number, ourTokens: number): number | null {
  if (ourTokens <= 0) return null;
  const ratio = providerTokens / ourTokens;
  return ratio >= 1 / MAX_CALIBRATION && ratio <= MAX_CALIBRATION ? clampCalibration(ratio) : null;
}

function clampCalibration(ratio: number): number {
  return Math.min(MAX_CALIBRATION, Math.max(1, ratio));
}
