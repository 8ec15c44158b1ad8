// What a journal says about its run: status, iteration count, usage and the work left unfinished.
import type { EventOf, JournalEvent, RunStatus, ToolCall } from "../journal/events.js";

export interface PendingCall {
  call: ToolCall;
  iteration: number;
  /** An ACTION_REQUEST was recorded: the tool may have started, so it must not run again. */
  requested: boolean;
}

export interface RunState {
  status: RunStatus;
  /** Number of THOUGHT events: the iteration the next model call will have is this + 1. */
  iterations: number;
  /** Tool calls of the last THOUGHT that have no ACTION_RESULT yet, in the model's order. */
  pending: PendingCall[];
  /** The open ask_human question, when the run waits for a human. */
  waiting: EventOf<"HUMAN_INPUT_REQUEST"> | null;
  lastThought: EventOf<"THOUGHT"> | null;
  lastError: EventOf<"ERROR"> | null;
  usage: { input_tokens: number; output_tokens: number; byModel: Map<string, { input_tokens: number; output_tokens: number }> };
  initialMessage: string | null;
}

/** Folds the journal into the run's state; the journal is the authority over metadata.json. */
export function deriveRunState(events: readonly JournalEvent[]): RunState {
  let status: RunStatus = "RUNNING";
  let iterations = 0;
  let lastThought: EventOf<"THOUGHT"> | null = null;
  let lastError: EventOf<"ERROR"> | null = null;
  let waiting: EventOf<"HUMAN_INPUT_REQUEST"> | null = null;
  let initialMessage: string | null = null;
  const requested = new Set<string>();
  const answered = new Set<string>();
  const usage: RunState["usage"] = { input_tokens: 0, output_tokens: 0, byModel: new Map() };

  for (const event of events) {
    switch (event.type) {
      case "ENGINE_START":
        status = "RUNNING";
        break;
      case "USER_MESSAGE":
        initialMessage ??= event.content;
        break;
      case "THOUGHT": {
        iterations += 1;
        lastThought = event;
        requested.clear();
        answered.clear();
        if (event.usage) {
          usage.input_tokens += event.usage.input_tokens;
          usage.output_tokens += event.usage.output_tokens;
          const perModel = usage.byModel.get(event.model) ?? { input_tokens: 0, output_tokens: 0 };
          perModel.input_tokens += event.usage.input_tokens;
          perModel.output_tokens += event.usage.output_tokens;
          usage.byModel.set(event.model, perModel);
        }
        break;
      }
      case "ACTION_REQUEST":
        requested.add(event.action_id);
        break;
      case "ACTION_RESULT":
        answered.add(event.action_id);
        if (waiting?.action_id === event.action_id) waiting = null;
        break;
      case "HUMAN_INPUT_REQUEST":
        waiting = event;
        break;
      case "HUMAN_INPUT_RECEIVED":
        if (waiting?.request_id === event.request_id) waiting = null;
        break;
      case "ERROR":
        lastError = event;
        break;
      case "ENGINE_END":
        status = event.status;
        break;
    }
  }

  const pending: PendingCall[] = [];
  for (const call of lastThought?.tool_calls ?? []) {
    if (answered.has(call.id)) continue;
    pending.push({ call, iteration: lastThought!.iteration, requested: requested.has(call.id) });
  }
  return { status, iterations, pending, waiting, lastThought, lastError, usage, initialMessage };
}
