// Checks that a finished run's files are whole: a valid journal ending COMPLETED, matching metadata and output.

/** Returns null when the run directory is sound, else what is wrong with it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function checkRun(runDir, stdout) {
  let lines;
  try {
    lines = readFileSync(join(runDir, "journal.jsonl"), "utf8").split("\n");
  } catch (err) {
    return `no journal: ${err.message}`;
  }
  if (lines.at(-1) !== "") return "journal does not end with a newline";
  const events = [];
  for (const [index, line] of lines.slice(0, -1).entries()) {
    try {
      events.push(JSON.parse(line));
    } catch {
      return `journal line ${index + 1} is not JSON`;
    }
  }
  for (const [index, event] of events.entries()) {
    if (event.seq !== index + 1) return `journal line ${index + 1} has seq ${event.seq}`;
    if (typeof event.type !== "string" || typeof event.timestamp !== "string") return `journal line ${index + 1} lacks type or timestamp`;
  }
  if (events[0]?.type !== "ENGINE_START") return "journal does not start with ENGINE_START";
  const end = events.at(-1);
  if (end?.type !== "ENGINE_END" || end.status !== "COMPLETED") return `journal ends with ${end?.type} ${end?.status ?? ""}`;
  let metadata;
  try {
    metadata = JSON.parse(readFileSync(join(runDir, "metadata.json"), "utf8"));
  } catch (err) {
    return `metadata.json unreadable: ${err.message}`;
  }
  if (metadata.status !== "COMPLETED") return `metadata.json says ${metadata.status}`;
  let result;
  try {
    result = JSON.parse(stdout);
  } catch {
    return "stdout is not one JSON RunResult";
  }
  if (result.status !== "COMPLETED" || result.run_id !== metadata.run_id) return `RunResult says ${result.status} for ${result.run_id}`;
  return null;
}
