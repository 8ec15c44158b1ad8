// Reads a run's io/ record folder (invocations, hooks, tool executions): each *.json file opened the safe way, bounded, parsed and validated.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { errorMessage } from "../errors.js";
import { isMissingFile, readRunFile } from "../safe-open.js";

/** No record the engine writes is larger: a whole request of a full model window, or a tool's whole output, is far less. */
const MAX_IO_RECORD_BYTES = 64 << 20;

interface IoRecordRead<T> {
  file: string;
  name: string;
  /** The record as validated. */
  data: T;
  /** The record as written: the schema's output orders fields its own way, and drops those it does not know. */
  raw: unknown;
}

/** The names of the `*.json` records in `dir`, in name order: none when the folder is not there; a folder that cannot be listed is told to `onBad` (which may throw). */
export function ioRecordNames(dir: string, onBad: (file: string, problem: string) => void): string[] {
  try {
    return readdirSync(dir).filter((name) => name.endsWith(".json")).sort();
  } catch (err) {
    if (!isMissingFile(err)) onBad(dir, `cannot be listed (${errorMessage(err)})`);
    return [];
  }
}

/** One record, opened the safe way, bounded, parsed and validated; what is wrong with it, when it cannot be read or does not pass `schema`. */
export function readIoRecord<S extends z.ZodType>(file: string, schema: S): { data: z.infer<S>; raw: unknown } | { problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(readRunFile(file, MAX_IO_RECORD_BYTES));
  } catch (err) {
    return { problem: `not readable JSON (${errorMessage(err)})` };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { data: parsed.data, raw };
  const issue = parsed.error.issues[0];
  return { problem: issue ? `field ${issue.path.join(".") || "(root)"}: ${issue.message}` : "not a valid record" };
}

/**
 * Every `*.json` record in `dir` that parses and passes `schema`, in name order. A folder that is not there holds no
 * records; a record that cannot be read, or a folder that cannot be listed, is told to `onBad` (which may throw) and left out.
 */
export function readIoRecords<S extends z.ZodType>(dir: string, schema: S, onBad: (file: string, problem: string) => void): IoRecordRead<z.infer<S>>[] {
  const records: IoRecordRead<z.infer<S>>[] = [];
  for (const name of ioRecordNames(dir, onBad)) {
    const file = join(dir, name);
    const read = readIoRecord(file, schema);
    if ("problem" in read) onBad(file, read.problem);
    else records.push({ file, name, ...read });
  }
  return records;
}
