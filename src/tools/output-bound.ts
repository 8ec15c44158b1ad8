// Bounds a tool's output text to what the model may see of it: its head and tail, with a marker saying what was cut.
import { keepHeadAndTail } from "../process/capture.js";

/** Default budget for what the model sees of one tool's output. */
export const DEFAULT_MAX_OBSERVATION_BYTES = 64 * 1024;

/**
 * Returns `text` unchanged when it fits in `maxBytes` UTF-8 bytes; otherwise its first and last halves of the budget
 * joined by `[... N bytes omitted ...]` (process/capture.ts, which keeps a stream's head and tail the same way). Cuts
 * never split a UTF-8 character, and the marker line itself is not counted in the budget.
 */
export function boundText(text: string, maxBytes: number): string {
  return keepHeadAndTail(text, maxBytes, "omitted");
}
