// One line saying what became of a batched model call (MODEL_QUEUED, MODEL_SUBMITTED): the one wording of show and the HTML report.
import type { EventOf } from "./events.js";

export function describeBatchedCall(event: Omit<EventOf<"MODEL_QUEUED">, "seq" | "timestamp"> | Omit<EventOf<"MODEL_SUBMITTED">, "seq" | "timestamp">): string {
  if (event.type === "MODEL_QUEUED") return `model call queued for the ${event.batch_api === "openai" ? "OpenAI Batch" : "Anthropic Message Batches"} API (${event.model} at ${event.base_url}), custom id ${event.custom_id}`;
  const batch = `submission ${event.submission_id} of ${event.requests} call${event.requests === 1 ? "" : "s"}`;
  if (event.failed !== undefined) return `${batch} refused by the provider, the call is queued again: ${event.failed}`;
  return event.batch_id === null ? `${batch} being sent (custom id ${event.custom_id})` : `${batch} accepted as batch ${event.batch_id} (custom id ${event.custom_id})`;
}
