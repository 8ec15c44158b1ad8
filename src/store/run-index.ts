// The user's run index: one line per run started or continued, pointing at its folder, so `--last` finds the newest run from anywhere.
//
// `$XDG_STATE_HOME/delta/runs.jsonl` (else `~/.local/state/delta/`), appended one line per write to a file opened
// for append. Bounded: once the file holds KEPT lines it is renamed to runs.1.jsonl (replacing the one before) and a
// new one begins; a reader takes the last KEPT lines of the two. A line is a pointer and nothing more: the run it names
// is then found and checked as any run is, and a run moved or deleted since is skipped.
import { closeSync, fstatSync, lstatSync, mkdirSync, readSync, renameSync, writeSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { openRunFile, openRunFileForAppend } from "../safe-open.js";
import { PRIVATE_DIR_MODE } from "../private-modes.js";
import { parseRunId, type RunId } from "./run-id.js";
import { userStateDir } from "./user-state.js";

/** How many runs the index remembers. */
export const RUNS_KEPT = 1000;
const CURRENT = "runs.jsonl";
const PREVIOUS = "runs.1.jsonl";
/** The shortest line a pointer makes; below KEPT lines of it, the file is not counted. */
const MIN_LINE_BYTES = 48;
/** A line longer than this is no pointer the engine wrote: skipped. A file is read at most KEPT of them from its end. */
const MAX_LINE_BYTES = 8192;

const PointerSchema = z.object({ run_id: z.string(), work_dir: z.string().refine(isAbsolute), at: z.string() });

interface IndexedRun {
  runId: RunId;
  workDir: string;
  /** When the run was started or continued (ISO). */
  at: string;
}

/** The index's folder: the user's state folder (user-state.ts). */
export function runIndexDir(env: NodeJS.ProcessEnv = process.env): string {
  return userStateDir(env);
}

export function runIndexFile(dir: string = runIndexDir()): string {
  return join(dir, CURRENT);
}

/** Appends a pointer to the run; where the index cannot be written (a read-only home, inside a box), nothing happens. */
export function rememberRun(run: { runId: string; workDir: string }, dir: string = runIndexDir()): void {
  let fd: number | null = null;
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const file = join(dir, CURRENT);
    fd = openRunFileForAppend(file, "the run index");
    writeSync(fd, `${JSON.stringify({ run_id: run.runId, work_dir: resolve(run.workDir), at: new Date().toISOString() })}\n`);
    rotateWhenFull(fd, file, join(dir, PREVIOUS));
  } catch {
    // The index is a convenience: a run never fails for it.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Once the file holds KEPT lines, it becomes the previous one. Only the file this process counted is moved: if another
 * process moved it in the meantime, the file now at the path is a new one and stays.
 */
function rotateWhenFull(fd: number, file: string, previous: string): void {
  const counted = fstatSync(fd);
  if (counted.size < RUNS_KEPT * MIN_LINE_BYTES) return;
  // A file larger than KEPT of the longest pointers is full whatever its lines.
  if (counted.size < RUNS_KEPT * MAX_LINE_BYTES && lineCount(readTail(fd, counted.size)) < RUNS_KEPT) return;
  const now = lstatSync(file);
  if (now.ino !== counted.ino || now.dev !== counted.dev) return;
  renameSync(file, previous);
}

/** The runs the index points at, newest first, each once, at most KEPT; lines that are no pointer are skipped. */
export function indexedRuns(dir: string = runIndexDir()): IndexedRun[] {
  const lines = [PREVIOUS, CURRENT].flatMap((name) => readLines(join(dir, name)));
  const seen = new Set<string>();
  const runs: IndexedRun[] = [];
  for (const line of lines.slice(-RUNS_KEPT).reverse()) {
    const run = pointer(line);
    if (run === null) continue;
    const key = JSON.stringify([run.workDir, run.runId]);
    if (seen.has(key)) continue;
    seen.add(key);
    runs.push(run);
  }
  return runs;
}

function pointer(line: string): IndexedRun | null {
  if (line.length > MAX_LINE_BYTES) return null;
  try {
    const parsed = PointerSchema.parse(JSON.parse(line));
    return { runId: parseRunId(parsed.run_id), workDir: parsed.work_dir, at: parsed.at };
  } catch {
    return null;
  }
}

/** The file's last KEPT lines at most (read from its end, bounded), or none when it is missing or not a regular file. */
function readLines(file: string): string[] {
  let fd: number;
  try {
    fd = openRunFile(file);
  } catch {
    return [];
  }
  try {
    return readTail(fd, fstatSync(fd).size).split("\n").filter((line) => line !== "");
  } finally {
    closeSync(fd);
  }
}

/** The end of a file, at most KEPT lines of the longest length a pointer may have; a line cut at the start is dropped. */
function readTail(fd: number, size: number): string {
  const length = Math.min(size, RUNS_KEPT * MAX_LINE_BYTES);
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const got = readSync(fd, buffer, read, length - read, size - length + read);
    if (got === 0) break;
    read += got;
  }
  const text = buffer.subarray(0, read).toString("utf8");
  return length < size ? text.slice(text.indexOf("\n") + 1) : text;
}

function lineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}
