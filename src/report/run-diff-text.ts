// `delta diff` as text for a person: where two runs' model requests first differ, each part that differs as a unified diff, then each iteration's tool calls side by side.
import { structuredPatch } from "diff";
import type { PartDifference } from "../llm/request-equality.js";
import { counted } from "../plural.js";
import { terminalSafe } from "../terminal-text.js";
import type { RunDiff } from "./run-diff.js";
import type { TextStyle } from "./text-style.js";

/** Lines of context around each change, as `diff -u` gives. */
const CONTEXT_LINES = 3;
/** Past this many changed lines a part is not diffed line by line (the diff's cost grows with their square): both sides are shown whole. */
const MAX_EDIT_LINES = 2_000;
/** Width of each run's column in the side-by-side table. */
const COLUMN = 48;

export function runDiffText(diff: RunDiff, style: TextStyle): string[] {
  const { a, b } = diff;
  const name = { a: `a ${a.run_id}`, b: `b ${b.run_id}` };
  const lines = [`${style.dim("a")}  ${terminalSafe(a.run_id)}  ${style.dim(a.run_dir)}  (${counted(a.model_calls, "model call")})`, `${style.dim("b")}  ${terminalSafe(b.run_id)}  ${style.dim(b.run_dir)}  (${counted(b.model_calls, "model call")})`, ""];
  const first = diff.first_difference;
  if (first === null) {
    lines.push(style.green(`The runs sent equal model requests: ${counted(a.model_calls, "model call")} each.`));
  } else if (first.missing_in !== null) {
    const has = first.missing_in === "a" ? "b" : "a";
    lines.push(style.red(`The runs differ at model call ${first.call}: only ${has} made it (iteration ${first.iteration[has]}); up to it their requests are equal.`));
  } else {
    const where = first.iteration.a === first.iteration.b ? `iteration ${first.iteration.a}` : `iteration ${first.iteration.a} in a, ${first.iteration.b} in b`;
    lines.push(style.red(`The runs differ at model call ${first.call} (${where}): ${first.parts.map((part) => part.part).join(", ")}.`));
    for (const part of first.parts) lines.push("", ...partLines(part, name, style));
  }
  lines.push("", style.bold("Tool calls, iteration by iteration") + style.dim("  (≠ where they differ)"), ...tableLines(diff, name, style));
  return lines;
}

function partLines(part: PartDifference, name: { a: string; b: string }, style: TextStyle): string[] {
  const lines = [style.bold(terminalSafe(part.summary))];
  const patch = structuredPatch(name.a, name.b, withNewline(part.a), withNewline(part.b), undefined, undefined, { context: CONTEXT_LINES, maxEditLength: MAX_EDIT_LINES });
  if (patch === undefined) {
    lines.push(style.dim(`(more than ${MAX_EDIT_LINES} lines changed: both sides follow whole)`), `--- ${name.a}`, ...indented(part.a), `+++ ${name.b}`, ...indented(part.b));
    return lines.map(terminalSafe);
  }
  lines.push(style.red(`--- ${terminalSafe(name.a)}`), style.green(`+++ ${terminalSafe(name.b)}`));
  for (const hunk of patch.hunks) {
    lines.push(style.cyan(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`));
    for (const line of hunk.lines) {
      const safe = terminalSafe(line);
      lines.push(line.startsWith("-") ? style.red(safe) : line.startsWith("+") ? style.green(safe) : safe);
    }
  }
  return lines;
}

/** A part's text ends with a newline, so a last line that changed is not also told "\ No newline at end of file". */
function withNewline(text: string): string {
  return text === "" || text.endsWith("\n") ? text : `${text}\n`;
}

function indented(text: string): string[] {
  return text.split("\n").map((line) => `  ${line}`);
}

function tableLines(diff: RunDiff, name: { a: string; b: string }, style: TextStyle): string[] {
  const lines = [style.dim(`   ${"iter".padStart(5)}  ${cell(name.a)}  ${name.b}`)];
  for (const row of diff.iterations) {
    const left = sideLines(row.a);
    const right = sideLines(row.b);
    for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
      const mark = index === 0 && !row.same ? style.yellow("≠") : " ";
      const number = index === 0 ? String(row.iteration).padStart(5) : " ".repeat(5);
      lines.push(`${mark}  ${number}  ${cell(left[index] ?? "")}  ${terminalSafe(right[index] ?? "")}`.trimEnd());
    }
  }
  return lines;
}

function sideLines(side: RunDiff["iterations"][number]["a"]): string[] {
  if (side === null) return ["(no such iteration)"];
  if (side.calls.length === 0) return [`answer: ${oneLine(side.answer ?? "")}`];
  return side.calls.map((call) => `${call.name} ${oneLine(call.arguments)} → ${call.status ?? "no result"}`);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** A left column of COLUMN characters: longer text is cut with an ellipsis. */
function cell(text: string): string {
  const safe = terminalSafe(text);
  return safe.length > COLUMN ? `${safe.slice(0, COLUMN - 1)}…` : safe.padEnd(COLUMN);
}
