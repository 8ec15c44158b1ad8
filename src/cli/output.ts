// Turns a RunOutcome into what stdout carries for --format text, json (RunResult v2.0), raw, or the last line of stream-json.
import { EXIT, type ExitCode } from "../errors.js";
import type { RunOutcome } from "../run/outcome.js";
import { toRunResult } from "../run/run-result.js";

export const FORMATS = ["text", "json", "raw", "stream-json"] as const;
export type OutputFormat = (typeof FORMATS)[number];

export function exitCodeFor(outcome: RunOutcome): ExitCode {
  switch (outcome.status) {
    case "COMPLETED":
      return EXIT.COMPLETED;
    case "WAITING_FOR_INPUT":
      return EXIT.WAITING_FOR_INPUT;
    case "INTERRUPTED":
      return EXIT.INTERRUPTED;
    case "DEFERRED":
      return EXIT.DEFERRED;
    default:
      return EXIT.FAILED;
  }
}

export function formatOutcome(outcome: RunOutcome, format: OutputFormat): string {
  switch (format) {
    case "json":
      return `${JSON.stringify(toRunResult(outcome), null, 2)}\n`;
    // The journal's lines went first, one per event; the RunResult is the last line.
    case "stream-json":
      return `${JSON.stringify(toRunResult(outcome))}\n`;
    case "raw":
      return outcome.status === "COMPLETED" ? rawResult(outcome.result, outcome.structured === true) : "";
    case "text":
      return textSummary(outcome);
  }
}

/** What -o/--output holds: the RunResult for json and stream-json, the bare result (empty unless COMPLETED) for text and raw. */
export function outputFileContent(outcome: RunOutcome, format: OutputFormat): string {
  return formatOutcome(outcome, format === "json" || format === "stream-json" ? "json" : "raw");
}

/** A schema-checked result is compact JSON on one line, for `jq` and line-reading scripts; any other JSON result is indented. */
function rawResult(result: unknown, structured: boolean): string {
  if (structured) return `${JSON.stringify(result)}\n`;
  if (result === null || result === undefined) return "";
  const text = typeof result === "string" ? result : JSON.stringify(result, null, 2);
  return text.endsWith("\n") ? text : `${text}\n`;
}

function textSummary(outcome: RunOutcome): string {
  const lines = [
    "--- Run Summary ---",
    `Run ID:     ${outcome.runId ?? "-"}`,
    `Status:     ${outcome.status}`,
    `Duration:   ${formatDuration(outcome.endTime.getTime() - outcome.startTime.getTime())}`,
    `Iterations: ${outcome.iterations}`,
    "-------------------",
  ];
  if (outcome.status === "COMPLETED") {
    lines.push("Result:", typeof outcome.result === "string" ? outcome.result : JSON.stringify(outcome.result, null, 2), "-------------------");
  } else if (outcome.interaction) {
    lines.push(`Question:   ${outcome.interaction.prompt}`, "-------------------");
  } else if (outcome.deferred) {
    lines.push(`Deferred:   ${outcome.deferred.reason}, ${outcome.deferred.resume_after === null ? "until it is raised or access returns (time unknown)" : `until ${outcome.deferred.resume_after}`}`, `Why:        ${outcome.deferred.message}`, "-------------------");
  } else if (outcome.error) {
    lines.push(`Error:      ${outcome.error.type}: ${outcome.error.message}`, "-------------------");
  }
  return `${lines.join("\n")}\n`;
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const seconds = Math.round(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${minutes}m ${seconds % 60}s` : `${seconds}s`;
}
