// One line saying how a CONTEXT_WINDOW event moved the conversation window: the one wording of engine.log, show and the HTML report.
import type { EventOf } from "./events.js";

const LIMITS = {
  max_iterations: (limit: number) => `more than max_iterations ${limit}`,
  max_tokens: (limit: number) => `more than max_tokens ${limit}`,
  context_window: (limit: number) => `more than the ${limit} tokens the model's window leaves it`,
  overflow: () => "the server refused the request as too long",
} as const;

/** What a move says, as journaled or still to be (the build logs it before it is appended). */
export function describeWindowMove(event: Omit<EventOf<"CONTEXT_WINDOW">, "seq" | "timestamp">): string {
  const range = event.dropped_from === event.dropped_to ? `iteration ${event.dropped_from}` : `iterations ${event.dropped_from}–${event.dropped_to}`;
  const tokens = event.tokens_before !== undefined && event.tokens_after !== undefined ? `, ${event.tokens_before} → ${event.tokens_after} tokens` : "";
  const window = event.overflow ? `; requests now keep within ${event.overflow.window_tokens} tokens` : "";
  return `${range} dropped (${LIMITS[event.reason](event.limit)}${tokens}); the context shows iteration ${event.first_iteration} on${window}`;
}
