#!/usr/bin/env node
// Compaction by composition: summarises the iterations the context window dropped by running the
// summariser agent (`delta run --format raw`), and caches each summary in the run directory under
// the range it covers, so a resumed or replayed run never pays for the same summary twice.
//
// Usage (a computed_file generator in context.yaml):  compact.mjs <output file>
// The engine sets JOURNAL_PATH, RUN_DIR, DELTA_AGENT_HOME and DELTA_WINDOW_FIRST_ITERATION (the
// iterations before it were dropped). SUMMARISER_REPLAY, when set, is passed on as the
// summariser's --replay: no model key needed. DELTA_BIN names the delta to run (default: `delta` on PATH).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const [output] = process.argv.slice(2);
const { JOURNAL_PATH: journalPath, RUN_DIR: runDir, DELTA_AGENT_HOME: agentHome } = process.env;
const first = Number(process.env.DELTA_WINDOW_FIRST_ITERATION);
if (!output || !journalPath || !runDir || !agentHome || !Number.isInteger(first) || first < 1) {
  process.stderr.write("usage: compact.mjs <output file>, run as a computed_file generator of delta (JOURNAL_PATH, RUN_DIR, DELTA_AGENT_HOME, DELTA_WINDOW_FIRST_ITERATION set)\n");
  process.exit(2);
}

mkdirSync(dirname(output), { recursive: true });
const last = first - 1;
if (last < 1) {
  writeFileSync(output, ""); // nothing dropped yet: an empty file adds nothing to the context
  process.exit(0);
}

const cacheDir = join(runDir, "summaries");
mkdirSync(cacheDir, { recursive: true });
const cacheFile = (end) => join(cacheDir, `1-${end}.md`);

let summary;
if (existsSync(cacheFile(last))) {
  summary = readFileSync(cacheFile(last), "utf8");
} else {
  // Build on the longest summary already made: only the iterations after it go to the summariser.
  const covered = readdirSync(cacheDir)
    .map((name) => /^1-(\d+)\.md$/.exec(name)?.[1])
    .filter((end) => end !== undefined && Number(end) < last)
    .map(Number)
    .sort((a, b) => b - a)[0] ?? 0;
  const previous = covered > 0 ? readFileSync(cacheFile(covered), "utf8") : null;
  summary = summarise(previous, covered, iterationsText(covered + 1, last));
  const temporary = `${cacheFile(last)}.${process.pid}.tmp`;
  writeFileSync(temporary, summary);
  renameSync(temporary, cacheFile(last)); // whole or absent, even if this process is killed
}

writeFileSync(output, `## Summary of iterations 1–${last}\n\nThe iterations from ${first} on follow in full.\n\n${summary.trim()}\n`);

function iterationsText(from, to) {
  const events = readFileSync(journalPath, "utf8")
    .split("\n")
    .flatMap((line) => {
      try {
        return line.trim() === "" ? [] : [JSON.parse(line)];
      } catch {
        return []; // a torn last line while the engine writes
      }
    })
    .filter((event) => event.iteration >= from && event.iteration <= to);
  const calls = new Map(events.filter((e) => e.type === "ACTION_REQUEST").map((e) => [e.action_id, e]));
  const lines = [];
  for (const event of events) {
    if (event.type === "THOUGHT" && event.content) lines.push(`iteration ${event.iteration}, the agent wrote: ${event.content}`);
    if (event.type === "ACTION_RESULT") {
      const args = JSON.stringify(calls.get(event.action_id)?.tool_args ?? {});
      lines.push(`iteration ${event.iteration}: ${event.tool_name} ${args} → ${event.status}: ${event.observation_content.slice(0, 2000)}`);
    }
  }
  return lines.join("\n");
}

function summarise(previous, covered, text) {
  const task = `${previous ? `The summary so far, of iterations 1–${covered}:\n\n${previous.trim()}\n\n` : ""}The iterations since:\n\n${text}\n`;
  const taskFile = join(cacheDir, `task-1-${last}.md`);
  writeFileSync(taskFile, task);
  const replay = process.env.SUMMARISER_REPLAY ? ["--replay", process.env.SUMMARISER_REPLAY] : [];
  const argv = ["run", "--agent", join(agentHome, "summariser"), "-w", join(runDir, "summariser"), "--format", "raw", "--message-file", taskFile, ...replay];
  try {
    return execFileSync(process.env.DELTA_BIN ?? "delta", argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    process.stderr.write(`compact.mjs: the summariser failed (${err.status === undefined ? err.message : `exit ${err.status}`}):\n${String(err.stderr ?? "").slice(-2000)}\n`);
    process.exit(1);
  }
}
