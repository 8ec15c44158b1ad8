// Answers to ask_human questions marked sensitive stay out of what show and report print (the journal keeps them for the model).
import type { JournalEvent } from "../journal/events.js";

const HIDDEN_ANSWER = "(hidden: the question was marked sensitive)";

/** A filter for events in journal order: the answer and the tool result that carries it are replaced. */
export function createSensitiveFilter(): (event: JournalEvent) => JournalEvent {
  const requests = new Set<string>();
  const actions = new Set<string>();
  return (event) => {
    if (event.type === "HUMAN_INPUT_REQUEST" && event.sensitive) {
      requests.add(event.request_id);
      actions.add(event.action_id);
    }
    if (event.type === "HUMAN_INPUT_RECEIVED" && requests.has(event.request_id)) return { ...event, response: HIDDEN_ANSWER };
    if (event.type === "ACTION_RESULT" && actions.has(event.action_id)) return { ...event, observation_content: HIDDEN_ANSWER };
    return event;
  };
}
