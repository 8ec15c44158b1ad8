// -o/--output: the result also written to a file, atomically, for CI steps that read it after the run.
import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { errorMessage, UsageError } from "../errors.js";
import { writeFileAtomic } from "../store/atomic-file.js";

/** The file to write, checked before anything runs: its folder must exist, and it must not be a folder itself. */
export function checkOutputFile(given: string): string {
  if (given === "") throw new UsageError("-o/--output needs a file path.");
  const path = resolve(given);
  if (statOrNull(path)?.isDirectory()) throw new UsageError(`-o ${given}: ${path} is a directory; give a file path.`);
  if (!statOrNull(dirname(path))?.isDirectory()) throw new UsageError(`-o ${given}: the folder ${dirname(path)} does not exist; create it first.`);
  return path;
}

/** Replaces the file whole: a reader sees the old content or the new, never half of it. */
export function writeOutputFile(path: string, content: string): void {
  try {
    writeFileAtomic(path, content);
  } catch (err) {
    throw new UsageError(`-o ${path}: cannot write the result there (${errorMessage(err)}).`);
  }
}

function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
