#!/usr/bin/env node
// Memory folding (design 2.4.6): writes a one-line-per-iteration summary of the iterations that the
// journal source no longer shows, so the model keeps the gist of old work without its full text.
//
// Usage (a computed_file generator in context.yaml):  fold-memory.mjs <recent iterations kept> <output file>
// The engine sets JOURNAL_PATH. <recent iterations kept> must equal the journal source's max_iterations.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const [keepArg, output] = process.argv.slice(2);
const keep = Number(keepArg);
if (!Number.isInteger(keep) || keep < 1 || !output) {
  process.stderr.write("usage: fold-memory.mjs <recent iterations kept (≥ 1)> <output file>\n");
  process.exit(2);
}
const journalPath = process.env.JOURNAL_PATH;
if (!journalPath) {
  process.stderr.write("fold-memory.mjs: JOURNAL_PATH is not set; run it as a computed_file generator of delta\n");
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

const iterations = [...new Set(events.filter((e) => e.type === "THOUGHT").map((e) => e.iteration))];
const folded = new Set(iterations.slice(0, Math.max(0, iterations.length - keep)));

const oneLine = (text, max = 100) => {
  const flat = String(text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

// The call behind each result, found once: a long run has thousands of events.
const requests = new Map(events.filter((e) => e.type === "ACTION_REQUEST").map((e) => [e.action_id, e]));

const lines = [];
for (const event of events) {
  if (!folded.has(event.iteration)) continue;
  if (event.type === "THOUGHT" && event.tool_calls.length === 0) lines.push(`- iteration ${event.iteration}: replied "${oneLine(event.content)}"`);
  if (event.type === "ACTION_RESULT") {
    const call = requests.get(event.action_id);
    const args = call ? ` ${oneLine(JSON.stringify(call.tool_args), 60)}` : "";
    lines.push(`- iteration ${event.iteration}: ${event.tool_name}${args} → ${event.status}: ${oneLine(event.observation_content, 60)}`);
  }
}

mkdirSync(dirname(output), { recursive: true });
// Nothing folded yet: an empty file, which the engine leaves out of the context.
const first = [...folded][0];
const last = [...folded].at(-1);
writeFileSync(
  output,
  lines.length === 0
    ? ""
    : `## Memory of iterations ${first}–${last} (folded)\n\nThe last ${keep} iterations follow in full; these older ones are summarized, one line each:\n\n${lines.join("\n")}\n`,
);
