#!/usr/bin/env node
// Memory folding: writes a one-line-per-iteration summary of the iterations that the
// journal source no longer shows, so the model keeps the gist of old work without its full text.
//
// Usage (a computed_file generator in context.yaml):  fold-memory.mjs <output file>
// The engine sets JOURNAL_PATH and DELTA_WINDOW_FIRST_ITERATION: the iterations before that one are
// folded. The window moves only in jumps, so the summary changes only then and the prompt cache
// keeps serving everything up to the newest iteration in between.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const [output] = process.argv.slice(2);
const journalPath = process.env.JOURNAL_PATH;
const first = Number(process.env.DELTA_WINDOW_FIRST_ITERATION);
if (!output || !journalPath || !Number.isInteger(first) || first < 1) {
  process.stderr.write("usage: fold-memory.mjs <output file>, run as a computed_file generator of delta (JOURNAL_PATH and DELTA_WINDOW_FIRST_ITERATION set)\n");
  process.exit(2);
}

const events = readFileSync(journalPath, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return []; // a torn last line while the engine writes
    }
  });

const oneLine = (text, max = 100) => {
  const flat = String(text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

// The call behind each result, found once: a long run has thousands of events.
const requests = new Map(events.filter((e) => e.type === "ACTION_REQUEST").map((e) => [e.action_id, e]));

const lines = [];
for (const event of events) {
  if (!(event.iteration < first)) continue;
  if (event.type === "THOUGHT" && event.tool_calls.length === 0) lines.push(`- iteration ${event.iteration}: replied "${oneLine(event.content)}"`);
  if (event.type === "ACTION_RESULT") {
    const call = requests.get(event.action_id);
    const args = call ? ` ${oneLine(JSON.stringify(call.tool_args), 60)}` : "";
    lines.push(`- iteration ${event.iteration}: ${event.tool_name}${args} → ${event.status}: ${oneLine(event.observation_content, 60)}`);
  }
}

mkdirSync(dirname(output), { recursive: true });
// Nothing folded yet: an empty file, which the engine leaves out of the context. The heading never
// changes, so each new summary is the previous one with lines added, and the run's io/ records
// store just those lines.
writeFileSync(
  output,
  lines.length === 0
    ? ""
    : `## Memory of older iterations (folded)\n\nThe iterations up to the last one below are summarized, one line each; those after it follow in full:\n\n${lines.join("\n")}\n`,
);
