// Rebuilds the model's conversation from journal events: a pure function, linear in the events.
import type { EventOf, JournalEvent, ToolCall } from "../journal/events.js";
import { replyEnding, type AssistantMessage, type ChatMessage } from "../conversation.js";

export interface JournalMessagesOptions {
  /** Keep only the THOUGHTs of the last N distinct iterations (with their tool results). */
  maxIterations?: number;
}

/** Content of the tool message for a call whose result never reached the journal. */
export const NO_RESULT_CONTENT = "(no result recorded for this call)";

type ActionResult = EventOf<"ACTION_RESULT">;
type Thought = EventOf<"THOUGHT">;

/**
 * USER_MESSAGE → user message; THOUGHT → assistant message, each of its tool calls answered at
 * once, in call order, by a tool message built from the ACTION_RESULT of that call, so the
 * conversation is always valid for the API. A call with no result (a crash, a pending human
 * answer) gets NO_RESULT_CONTENT. Results are matched by action_id among the results that follow
 * the THOUGHT and precede the next one, so providers that reuse call ids across replies still pair
 * correctly. A user message journaled among a THOUGHT's results comes after those results.
 *
 * The model sees a result's status as a first line: `[exit code N]` for FAILED (`[failed]` when
 * no code was recorded) and an `[error] ` prefix for ERROR; SUCCESS content is unchanged.
 *
 * `maxIterations` drops THOUGHTs (and their results) outside the last N distinct iterations but
 * keeps every USER_MESSAGE, in journal order: they hold the task and the human's instructions,
 * so the ones older than the window come first.
 *
 * A THOUGHT keeps what the provider needs back (reasoning, provider_data) exactly as journaled.
 * A reply without tool calls that a token limit cut off or a filter stopped is left out: it ended
 * the run FAILED, and continuing asks the model again rather than showing it a broken answer.
 *
 * All other event types produce no messages.
 */
export function journalToMessages(events: readonly JournalEvent[], options: JournalMessagesOptions = {}): ChatMessage[] {
  const keptIterations = options.maxIterations === undefined ? null : lastIterations(events, options.maxIterations);
  const resultsAfter = resultsByThought(events, keptIterations);
  const messages: ChatMessage[] = [];
  let thoughtIndex = -1;
  for (const event of events) {
    if (event.type === "USER_MESSAGE") {
      messages.push({ role: "user", content: event.content });
    } else if (event.type === "THOUGHT") {
      thoughtIndex += 1;
      if (keptIterations !== null && !keptIterations.has(event.iteration)) continue;
      pushThought(messages, event, resultsAfter[thoughtIndex] ?? new Map());
    }
  }
  return messages;
}

/**
 * One entry per THOUGHT, in order: action_id → the results journaled before the next THOUGHT.
 * THOUGHTs outside `kept` get none, so a long run's window costs maps for the window only.
 */
function resultsByThought(events: readonly JournalEvent[], kept: Set<number> | null): (Map<string, ActionResult[]> | undefined)[] {
  const groups: (Map<string, ActionResult[]> | undefined)[] = [];
  let current: Map<string, ActionResult[]> | undefined;
  for (const event of events) {
    if (event.type === "THOUGHT") {
      current = kept === null || kept.has(event.iteration) ? new Map() : undefined;
      groups.push(current);
    } else if (event.type === "ACTION_RESULT" && current !== undefined) {
      const sameId = current.get(event.action_id);
      if (sameId) sameId.push(event);
      else current.set(event.action_id, [event]);
    }
  }
  return groups;
}

function lastIterations(events: readonly JournalEvent[], count: number): Set<number> {
  const kept = new Set<number>();
  for (let index = events.length - 1; index >= 0 && kept.size < count; index -= 1) {
    const event = events[index];
    if (event?.type === "THOUGHT") kept.add(event.iteration);
  }
  return kept;
}

function pushThought(messages: ChatMessage[], thought: Thought, results: Map<string, ActionResult[]>): void {
  if (thought.tool_calls.length === 0) {
    if (replyEnding(thought.finish_reason) !== "finished") return;
    messages.push(assistantMessage(thought));
    return;
  }
  messages.push(assistantMessage(thought));
  for (const call of thought.tool_calls) {
    messages.push({ role: "tool", tool_call_id: call.id, content: toolContent(call, results) });
  }
}

function assistantMessage(thought: Thought): AssistantMessage {
  const message: AssistantMessage = { role: "assistant", content: thought.content };
  if (thought.tool_calls.length > 0) message.tool_calls = thought.tool_calls;
  if (thought.reasoning !== undefined) message.reasoning = thought.reasoning;
  if (thought.provider_data !== undefined) message.provider_data = thought.provider_data;
  return message;
}

function toolContent(call: ToolCall, results: Map<string, ActionResult[]>): string {
  // shift(): a reply that repeats one id gets its results in the order they were journaled.
  const result = results.get(call.id)?.shift();
  return result === undefined ? NO_RESULT_CONTENT : observationForModel(result);
}

function observationForModel(result: ActionResult): string {
  switch (result.status) {
    case "SUCCESS":
      return result.observation_content;
    case "FAILED":
      return `${result.exit_code === null ? "[failed]" : `[exit code ${result.exit_code}]`}\n${result.observation_content}`;
    case "ERROR":
      return `[error] ${result.observation_content}`;
  }
}
