// What `delta verify` says of a journal's chain: a few lines for a person, one JSON object for a pipeline.
import type { ChainReport, RecordedEnd } from "../journal/chain-verify.js";
import { terminalSafe } from "../terminal-text.js";
import type { TextStyle } from "./text-style.js";

export interface ChainVerdict extends ChainReport {
  runId: string;
  journal: string;
  /** The end metadata.json recorded when the run's last process ended, checked against the journal; null when it recorded none. */
  recordedEnd: RecordedEnd | null;
}

/** The verdict as `--format json` prints it: one object, snake_case as the rest of the command line's JSON. */
export function verdictJson(verdict: ChainVerdict): Record<string, unknown> {
  return {
    run_id: verdict.runId,
    journal: verdict.journal,
    status: verdict.status,
    lines: verdict.lines,
    chained_from: verdict.chainedFrom,
    head: verdict.head,
    torn_tail_bytes: verdict.tornTailBytes,
    recorded_end: verdict.recordedEnd,
    problem_count: verdict.problemCount,
    problems: verdict.problems,
  };
}

/** The verdict for a person: the status first, then where each problem is. What the journal supplies (a line's type) is made safe for a terminal. */
export function verdictText(verdict: ChainVerdict, style: TextStyle): string[] {
  const lines = [headline(verdict, style)];
  if (verdict.status === "intact") {
    const from = verdict.chainedFrom === 1 ? "every line is chained" : `lines 1–${verdict.chainedFrom! - 1} were written without hashes (an older engine); the chain holds them from line ${verdict.chainedFrom} on`;
    lines.push(`  ${countOf(verdict.lines)}; ${from}`);
    lines.push(`  head ${verdict.head}${verdict.recordedEnd === null ? "" : " (the end metadata.json recorded holds)"}`);
  }
  for (const problem of verdict.problems) {
    const what = [problem.seq === null ? null : `seq ${problem.seq}`, problem.type === null ? null : terminalSafe(problem.type)].filter(Boolean).join(", ");
    lines.push(`  line ${problem.line}${what === "" ? "" : ` (${what})`}: ${problem.message}`);
  }
  if (verdict.problemCount > verdict.problems.length) lines.push(`  … and ${verdict.problemCount - verdict.problems.length} more`);
  if (verdict.tornTailBytes > 0) lines.push(style.dim(`  ${verdict.tornTailBytes} bytes after the last line: a write a crash cut short (the next continue removes them)`));
  return lines;
}

function headline(verdict: ChainVerdict, style: TextStyle): string {
  const name = `Journal of run ${verdict.runId}`;
  const journal = terminalSafe(verdict.journal);
  switch (verdict.status) {
    case "intact":
      return `${name}: ${style.green("intact")} — not edited since it was written`;
    case "broken":
      return `${name}: ${style.red("BROKEN")} — edited after it was written (${verdict.problemCount} ${verdict.problemCount === 1 ? "problem" : "problems"}) · ${journal}`;
    case "unchained":
      return `${name}: ${style.yellow("unchained")} — ${countOf(verdict.lines)} written by an engine that did not hash its journal; nothing to verify · ${journal}`;
  }
}

function countOf(lines: number): string {
  return `${lines} ${lines === 1 ? "line" : "lines"}`;
}
