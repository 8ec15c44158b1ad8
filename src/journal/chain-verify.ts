// Whether, and where, a journal was edited after it was written: its hash chain checked line by line, and its end against the one its last process recorded.
import { createHash } from "node:crypto";
import { closeSync, fstatSync } from "node:fs";
import { openRunFile } from "../safe-open.js";
import { anchorHash, chainHash, splitHashedLine } from "./chain.js";
import { scanLines } from "./line-scanner.js";

/** At most this many problems are described; all are counted. */
const MAX_PROBLEMS = 20;

interface ChainProblem {
  /** 1-based line number. */
  line: number;
  /** The line's seq and type, when it still parses. */
  seq: number | null;
  type: string | null;
  message: string;
}

/** Where the journal ended when a process of the run last ended, as metadata.json recorded it. */
export interface RecordedEnd {
  bytes: number;
  hash: string;
}

export interface ChainReport {
  /** intact: every hashed line holds; broken: something was edited; unchained: no line carries a hash (an older engine wrote it all). */
  status: "intact" | "broken" | "unchained";
  /** Complete lines (a complete last line without its newline counts). */
  lines: number;
  /** The first line that carries a hash; the lines before it were written by an engine that did not hash (null: none does). */
  chainedFrom: number | null;
  /** The last line's hash: what a copy of the journal kept elsewhere can be compared with. */
  head: string | null;
  /** Bytes after the last complete line: a write a crash cut short, which the next `continue` removes. */
  tornTailBytes: number;
  problems: ChainProblem[];
  problemCount: number;
}

interface Previous {
  /** The hash the previous line carried, or null when it carried none. */
  hash: string | null;
  seq: number | null;
}

/** Checks the journal at `path` against its chain and, when given, against the end its last process recorded. */
export function verifyJournalChain(path: string, recordedEnd: RecordedEnd | null = null): ChainReport {
  const fd = openRunFile(path);
  try {
    return verifyOpen(fd, fstatSync(fd).size, recordedEnd);
  } finally {
    closeSync(fd);
  }
}

function verifyOpen(fd: number, size: number, recordedEnd: RecordedEnd | null): ChainReport {
  const problems: ChainProblem[] = [];
  let problemCount = 0;
  const report = (problem: ChainProblem): void => {
    problemCount += 1;
    if (problems.length < MAX_PROBLEMS) problems.push(problem);
  };
  // Every byte so far: a line after one without a hash is chained to the digest of all that comes before it.
  const before = createHash("sha256");
  let previous: Previous = { hash: null, seq: null };
  let lines = 0;
  let chainedFrom: number | null = null;
  let endSeen = recordedEnd === null;

  const check = (line: Buffer, lineEnd: number): void => {
    lines += 1;
    const { seq, type } = identify(line);
    const at = { line: lines, seq, type };
    const hashed = splitHashedLine(line);
    if (hashed === null) {
      if (chainedFrom !== null) report({ ...at, message: `carries no hash, but the chain starts at line ${chainedFrom}: it was changed, or written by an engine older than the chain` });
      previous = { hash: null, seq };
    } else {
      chainedFrom ??= lines;
      const expected = chainHash(previous.hash ?? anchorHash(before), hashed.body);
      if (expected !== hashed.hash) report({ ...at, message: mismatch(previous, seq, lines === chainedFrom) });
      previous = { hash: hashed.hash, seq };
    }
    before.update(line);
    before.update("\n");
    if (recordedEnd !== null && lineEnd === recordedEnd.bytes) {
      endSeen = true;
      if (hashed?.hash !== recordedEnd.hash) report({ ...at, message: `metadata.json recorded that the journal ended here with hash ${recordedEnd.hash} when its process ended; this line ${hashed === null ? "carries no hash" : `carries ${hashed.hash}`}` });
    }
  };

  const scanned = scanLines(fd, 0, size, (line, offset, length) => {
    if (line === null) {
      lines += 1;
      report({ line: lines, seq: null, type: null, message: `is ${length} bytes, longer than any line the engine writes` });
      return;
    }
    check(line, offset + length + 1);
  });
  let tornTailBytes = scanned.tail.bytes;
  // A complete event whose newline a crash cut off: the engine terminates it on the next open, so it counts.
  if (scanned.tail.text !== null && tornTailBytes > 0 && identify(scanned.tail.text).seq !== null) {
    check(scanned.tail.text, size);
    tornTailBytes = 0;
  }
  if (!endSeen && recordedEnd !== null) {
    report({
      line: lines,
      seq: null,
      type: null,
      message: recordedEnd.bytes > size - tornTailBytes
        ? `the journal ends at byte ${size - tornTailBytes}, but metadata.json recorded ${recordedEnd.bytes} bytes when its process ended: its tail was cut off`
        : `no line ends at byte ${recordedEnd.bytes}, where metadata.json recorded the journal ended when its process ended: lines before it were changed`,
    });
  }
  return {
    status: problemCount > 0 ? "broken" : chainedFrom === null ? "unchained" : "intact",
    lines,
    chainedFrom,
    head: previous.hash,
    tornTailBytes,
    problems,
    problemCount,
  };
}

/** What a hash that does not hold says, read with the seq before it. */
function mismatch(previous: Previous, seq: number | null, firstChained: boolean): string {
  if (previous.seq !== null && seq !== null) {
    if (seq > previous.seq + 1) return `does not follow the line before it (seq ${previous.seq}): ${seq === previous.seq + 2 ? `seq ${previous.seq + 1} was` : `seq ${previous.seq + 1}–${seq - 1} were`} removed`;
    if (seq <= previous.seq) return `comes after seq ${previous.seq}: lines were reordered or inserted`;
  }
  if (firstChained && previous.seq !== null) return "is the first line with a hash, which covers the lines before it: they (or this line) changed since it was written";
  return "was changed since it was written (or the hash of the line before it was)";
}

/** A line's seq and type, when it is still a JSON object that has them. */
function identify(line: Buffer): { seq: number | null; type: string | null } {
  try {
    const value: unknown = JSON.parse(line.toString("utf8"));
    if (typeof value !== "object" || value === null) return { seq: null, type: null };
    const { seq, type } = value as { seq?: unknown; type?: unknown };
    return { seq: typeof seq === "number" ? seq : null, type: typeof type === "string" ? type : null };
  } catch {
    return { seq: null, type: null };
  }
}
