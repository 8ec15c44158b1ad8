// A fork's io/ records: the model, tool and hook records of the iterations it keeps, copied as written; the request parts they use, pointed at the fork's journal.
import { existsSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fsError } from "../fs-errors.js";
import { PRIVATE_FILE_MODE } from "../private-modes.js";
import { readRunFile } from "../safe-open.js";
import { ioRecordNames } from "./io-records.js";
import { indexInvocationRecords, readInvocationRecord } from "./recorded-requests.js";
import { copyRequestParts, partsOf } from "./request-parts.js";
import type { RunPaths } from "./run-dir.js";

/** No record the engine writes is larger (io-records.ts bounds them the same). */
const MAX_IO_RECORD_BYTES = 64 << 20;

interface Kept {
  /** The last iteration the fork keeps. */
  throughIteration: number;
  /** Each copied event's seq in the source's journal → its seq in the fork's. */
  seqOf: ReadonlyMap<number, number>;
  /** The file names, in io/hooks/, of the records the copied HOOK_RESULT events name. */
  hookRecords: ReadonlySet<string>;
}

export function copyIoRecords(source: RunPaths, fork: RunPaths, kept: Kept): { invocations: number; toolExecutions: number; hooks: number } {
  const invocations = indexInvocationRecords(source).filter((record) => record.iteration <= kept.throughIteration);
  const wanted = new Set<number>();
  for (const { file } of invocations) {
    const ref = readInvocationRecord(file).request_parts;
    if (ref !== undefined) for (const n of partsOf(ref)) wanted.add(n);
  }
  // The parts first: a record is never on disk before what it points at.
  if (wanted.size > 0) copyRequestParts(source, fork, wanted, kept.seqOf);
  for (const { file } of invocations) copyRecord(file, join(fork.invocationsDir, basename(file)));
  let toolExecutions = 0;
  for (const name of ioRecordNames(source.toolExecutionsDir, refuse)) {
    const file = join(source.toolExecutionsDir, name);
    const text = readRunFile(file, MAX_IO_RECORD_BYTES);
    if (iterationOf(text, file) > kept.throughIteration) continue;
    writeCopy(join(fork.toolExecutionsDir, name), text);
    toolExecutions += 1;
  }
  let hooks = 0;
  for (const name of kept.hookRecords) {
    // A record pruned from the source (`prune --io-only` keeps the journal) is not there to copy; the journal is the run.
    if (!existsSync(join(source.hooksDir, name))) continue;
    copyRecord(join(source.hooksDir, name), join(fork.hooksDir, name));
    hooks += 1;
  }
  return { invocations: invocations.length, toolExecutions, hooks };
}

/** The iteration a tool's record names; a record without one (none is written so) counts as beyond any fork. */
function iterationOf(text: string, file: string): number {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (err) {
    return refuse(file, `it is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const iteration = typeof record === "object" && record !== null ? (record as { iteration?: unknown }).iteration : undefined;
  return typeof iteration === "number" ? iteration : Number.POSITIVE_INFINITY;
}

function copyRecord(from: string, to: string): void {
  writeCopy(to, readRunFile(from, MAX_IO_RECORD_BYTES));
}

function writeCopy(to: string, text: string): void {
  try {
    writeFileSync(to, text, { flag: "wx", mode: PRIVATE_FILE_MODE });
  } catch (err) {
    throw fsError(`Cannot write ${to}`, err);
  }
}

function refuse(file: string, problem: string): never {
  throw fsError(`Cannot copy ${file}`, new Error(problem));
}
