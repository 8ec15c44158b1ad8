// Rebuilds the model's conversation from journal events: one pass over them, each settled iteration's messages made once per process.
import type { EventOf, JournalEvent } from "../journal/events.js";
import { MADE_BY, replyEnding, type AssistantMessage, type ChatMessage } from "../conversation.js";

/** Content of the tool message for a call whose result never reached the journal. */
export const NO_RESULT_CONTENT = "(no result recorded for this call)";

type ActionResult = EventOf<"ACTION_RESULT">;
type Thought = EventOf<"THOUGHT">;

/** One message and the event it renders (null for a placeholder), which keys the caches of its size. */
export interface JournalEntry {
  message: ChatMessage;
  source: JournalEvent | null;
}

/** Messages and, at the same index, the event each renders (null for a placeholder): a stored request points at the journal for their text. */
export interface JournalConversation {
  messages: ChatMessage[];
  renderedFrom: (JournalEvent | null)[];
}

/** A user message, or one iteration: a THOUGHT with the results of its calls, never split. */
export type JournalSegment =
  | { kind: "user"; entry: JournalEntry }
  | { kind: "iteration"; iteration: number; entries: readonly JournalEntry[] };

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
 * Iterations before `firstIteration` (the window, see window-rule.ts) are left out; every
 * USER_MESSAGE is kept, in journal order: they hold the task and the human's instructions, so the
 * ones older than the window come first. The engine's own messages (`source: "engine"`, a re-ask
 * after an answer that did not meet the output schema) go with the answer before them.
 *
 * A THOUGHT keeps what the provider needs back (reasoning, provider_data) exactly as journaled.
 * A reply without tool calls that a token limit cut off or a filter stopped is left out: it ended
 * the run FAILED, and continuing asks the model again rather than showing it a broken answer.
 *
 * All other event types produce no messages.
 *
 * `events` may be an array built before that has since only grown at its end (the reader keeps one such array,
 * shown-journal.ts): the build then starts from what the last one settled. An array changed any other way must be a new one.
 */
export function journalConversation(events: readonly JournalEvent[], firstIteration = 1): JournalConversation {
  const known = builtPrefixes.get(events);
  const from = known !== undefined && known.first === firstIteration && known.upTo <= events.length ? known : null;
  // The prefix's arrays become this build's: the walk starts at a THOUGHT, so a new prefix replaces them before the return.
  const conversation: JournalConversation = { messages: from?.messages ?? [], renderedFrom: from?.renderedFrom ?? [] };
  const push = (entry: JournalEntry): void => {
    conversation.messages.push(entry.message);
    conversation.renderedFrom.push(entry.source);
  };
  // The last THOUGHT the walk met: what the conversation held then is final.
  const settled = { upTo: -1, length: 0, lastIteration: 0 };
  walkJournal(
    events,
    firstIteration,
    {
      user: push,
      iteration: (_iteration, entries) => {
        for (const entry of entries) push(entry);
      },
      thoughtAt: (index, lastIteration) => {
        settled.upTo = index;
        settled.length = conversation.messages.length;
        settled.lastIteration = lastIteration;
      },
    },
    from ?? undefined,
  );
  if (settled.upTo >= 0) {
    const { upTo, length, lastIteration } = settled;
    builtPrefixes.set(events, { first: firstIteration, upTo, lastIteration, messages: conversation.messages.slice(0, length), renderedFrom: conversation.renderedFrom.slice(0, length) });
  }
  return conversation;
}

/** Where a walk of a growing events array can start again: the conversation of events[0, upTo), final since a THOUGHT stands at upTo, and the walk's state there. */
interface BuiltPrefix {
  first: number;
  upTo: number;
  lastIteration: number;
  messages: ChatMessage[];
  renderedFrom: (JournalEvent | null)[];
}

// A run's shown events are one array that only grows while its window stays (shown-journal.ts): each build walks only
// what came after the last THOUGHT the previous build saw, and copies what came before.
const builtPrefixes = new WeakMap<readonly JournalEvent[], BuiltPrefix>();

/** The conversation as segments in journal order; iterations before `firstIteration` are not built at all. */
export function journalSegments(events: readonly JournalEvent[], firstIteration = 1): JournalSegment[] {
  const segments: JournalSegment[] = [];
  walkJournal(events, firstIteration, {
    user: (entry) => segments.push({ kind: "user", entry }),
    iteration: (iteration, entries) => segments.push({ kind: "iteration", iteration, entries }),
  });
  return segments;
}

interface JournalVisitor {
  user(entry: JournalEntry): void;
  /** `entries`: the iteration's messages, shared between calls once settled; never changed by a visitor. */
  iteration(iteration: number, entries: readonly JournalEntry[]): void;
  /** Told at each THOUGHT, before it is visited: what came before it is final. */
  thoughtAt?(index: number, lastIteration: number): void;
}

/** Visits events[from.upTo…] (all of them without `from`), `from.lastIteration` the last THOUGHT's iteration before. */
function walkJournal(events: readonly JournalEvent[], firstIteration: number, visit: JournalVisitor, from?: { upTo: number; lastIteration: number }): void {
  let lastIteration = from?.lastIteration ?? 0;
  for (let index = from?.upTo ?? 0; index < events.length; index += 1) {
    const event = events[index]!;
    if (event.type === "USER_MESSAGE") {
      // The engine's re-ask is about the answer before it: it goes when that answer leaves the window.
      if (event.source === "engine" && lastIteration < firstIteration) continue;
      const message = renderedOnce(event, () => ({ role: "user", content: event.content }));
      visit.user({ message, source: event });
    } else if (event.type === "THOUGHT") {
      visit.thoughtAt?.(index, lastIteration);
      lastIteration = event.iteration;
      if (event.iteration < firstIteration) continue;
      visit.iteration(event.iteration, thoughtEntries(events, index));
    }
  }
}

/** The segments' messages, in order, with the event each renders. */
export function segmentConversation(segments: readonly JournalSegment[]): JournalConversation {
  const conversation: JournalConversation = { messages: [], renderedFrom: [] };
  const push = (entry: JournalEntry): void => {
    conversation.messages.push(entry.message);
    conversation.renderedFrom.push(entry.source);
  };
  for (const segment of segments) {
    if (segment.kind === "user") push(segment.entry);
    else for (const entry of segment.entries) push(entry);
  }
  return conversation;
}

// A THOUGHT's messages once a later THOUGHT follows it: its results are the ones journaled before that THOUGHT, so they
// can no longer change, and each iteration's build reuses them rather than matching the whole journal's results again.
const settledEntries = new WeakMap<Thought, readonly JournalEntry[]>();

/** The messages of the THOUGHT at `events[index]`: its reply, then the result of each of its calls. */
function thoughtEntries(events: readonly JournalEvent[], index: number): readonly JournalEntry[] {
  const thought = events[index] as Thought;
  const settled = settledEntries.get(thought);
  // Settled where a THOUGHT follows it in these events too: an earlier part of the journal may end before its results.
  if (settled !== undefined && thoughtFollows(events, index)) return settled;
  const { results, settles } = resultsAfter(events, index);
  const entries: JournalEntry[] = [];
  pushThought(thought, results, (message, source) => entries.push({ message, source }));
  if (settles) settledEntries.set(thought, entries);
  return entries;
}

function thoughtFollows(events: readonly JournalEvent[], index: number): boolean {
  for (let at = index + 1; at < events.length; at += 1) if (events[at]!.type === "THOUGHT") return true;
  return false;
}

/** action_id → the results journaled after the THOUGHT at `index` and before the next THOUGHT; `settles` when a next THOUGHT was found. */
function resultsAfter(events: readonly JournalEvent[], index: number): { results: Map<string, ActionResult[]>; settles: boolean } {
  const results = new Map<string, ActionResult[]>();
  for (let at = index + 1; at < events.length; at += 1) {
    const event = events[at]!;
    if (event.type === "THOUGHT") return { results, settles: true };
    if (event.type !== "ACTION_RESULT") continue;
    const sameId = results.get(event.action_id);
    if (sameId) sameId.push(event);
    else results.set(event.action_id, [event]);
  }
  return { results, settles: false };
}

/** A THOUGHT's messages, each with the event it renders: its reply, then the result of each call. */
function pushThought(thought: Thought, results: Map<string, ActionResult[]>, push: (message: ChatMessage, source: JournalEvent | null) => void): void {
  // A reply the model did not finish is left out, its tool calls with it (none ran); one an older engine ran calls of stays.
  if (replyEnding(thought.finish_reason) !== "finished" && !thought.tool_calls.some((call) => results.has(call.id))) return;
  push(renderedOnce(thought, () => assistantMessage(thought)), thought);
  for (const call of thought.tool_calls) {
    // shift(): a reply that repeats one id gets its results in the order they were journaled.
    const result = results.get(call.id)?.shift();
    if (result === undefined) push({ role: "tool", tool_call_id: call.id, content: NO_RESULT_CONTENT }, null);
    else push(renderedOnce(result, () => toolMessage(call.id, result)), result);
  }
}

// The reader hands back the same event objects every iteration: each renders to the same message
// object, so what is keyed by a message (its request part, its size) is worked out once per process.
const rendered = new WeakMap<JournalEvent, ChatMessage>();

function renderedOnce(event: JournalEvent, render: () => ChatMessage): ChatMessage {
  let message = rendered.get(event);
  if (message === undefined) {
    message = render();
    rendered.set(event, message);
  }
  return message;
}

function assistantMessage(thought: Thought): AssistantMessage {
  const message: AssistantMessage = { role: "assistant", content: thought.content };
  if (thought.tool_calls.length > 0) message.tool_calls = thought.tool_calls;
  if (thought.reasoning !== undefined) message.reasoning = thought.reasoning;
  if (thought.provider_data !== undefined) message.provider_data = thought.provider_data;
  if (thought.answered_by !== undefined) message[MADE_BY] = thought.answered_by;
  return message;
}

/** The tool message of a result; its content is the observation after a status line (see observationPrefix). */
function toolMessage(callId: string, result: ActionResult): ChatMessage {
  const prefix = observationPrefix(result);
  return { role: "tool", tool_call_id: callId, content: prefix + result.observation_content };
}

function observationPrefix(result: ActionResult): string {
  switch (result.status) {
    case "SUCCESS":
      return "";
    case "FAILED":
      return `${result.exit_code === null ? "[failed]" : `[exit code ${result.exit_code}]`}\n`;
    case "ERROR":
      return "[error] ";
  }
}

