// A final answer held to the run's output schema: one ```json fence removed, parsed, validated; and the engine's re-ask when it does not match.
import type { StructuredOutput } from "../agent/output-schema.js";
import type { EventOf, JournalEvent } from "../journal/events.js";

type AnswerCheck = { valid: true; value: unknown } | { valid: false; problems: string[] };

/** The one fence the engine takes off: ```json on its own line, the JSON, ``` at the end. */
const JSON_FENCE = /^```json[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;
/** The schema is quoted in a re-ask up to this size; a bigger one is named by its source only. */
const MAX_QUOTED_SCHEMA_CHARS = 16_000;

export function checkFinalAnswer(text: string | null, output: StructuredOutput): AnswerCheck {
  const trimmed = (text ?? "").trim();
  if (trimmed === "") return { valid: false, problems: ["the answer is empty; it must be one JSON value"] };
  const json = JSON_FENCE.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { valid: false, problems: [`the answer is not JSON (${err instanceof Error ? err.message : String(err)}); it must be only the JSON value, with no text around it`] };
  }
  const problems = output.validate(value);
  return problems.length === 0 ? { valid: true, value } : { valid: false, problems };
}

/** What the engine tells the model when its final answer does not match: the problems and the schema. */
export function reaskMessage(problems: readonly string[], output: StructuredOutput): string {
  const schema = JSON.stringify(output.schema.schema);
  const quoted = schema.length <= MAX_QUOTED_SCHEMA_CHARS ? `\n\nThe schema:\n${schema}` : "";
  return (
    "Your final answer does not match the JSON Schema this run's answer must meet:\n" +
    problems.map((problem) => `- ${problem}`).join("\n") +
    "\n\nReply again with only the JSON value that meets the schema (no text around it; one ```json fence at most). You may call tools first." +
    quoted
  );
}

/** The engine's re-ask the model is answering now, if the last message before its reply was one. */
export function answersReask(events: readonly JournalEvent[]): boolean {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!;
    if (event.type === "USER_MESSAGE") return event.source === "engine";
    if (event.type === "THOUGHT" || event.type === "ACTION_RESULT" || event.type === "HUMAN_INPUT_RECEIVED") return false;
  }
  return false;
}

/**
 * A final answer left unmatched by an earlier invocation (the run failed OUTPUT_INVALID, or stopped
 * before the re-ask was journaled) and followed by no message: `continue` re-asks before the next call.
 */
export function unansweredFinalAnswer(events: readonly JournalEvent[]): EventOf<"THOUGHT"> | null {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!;
    if (event.type === "USER_MESSAGE") return null;
    if (event.type === "THOUGHT") return event.tool_calls.length === 0 ? event : null;
  }
  return null;
}
