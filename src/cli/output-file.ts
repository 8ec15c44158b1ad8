// -o/--output: the result also written to a file, atomically, for CI steps that read it after the run.
import { realpathSync, statSync } from "node:fs";
import { basename, dirname, resolve, sep } from "node:path";
import { DeltaError, errorMessage, UsageError } from "../errors.js";
import { writeFileAtomic } from "../store/atomic-file.js";

/** A new result file is private, as the run's own files are; an existing one keeps the mode its owner gave it. */
const NEW_FILE_MODE = 0o600;

/** The file to write, checked before anything runs: its folder must exist, it must not be a folder itself, nor lie under a `.delta` folder. */
export function checkOutputFile(given: string): string {
  if (given === "") throw new UsageError("-o/--output needs a file path.");
  const path = resolve(given);
  if (statOrNull(path)?.isDirectory()) throw new UsageError(`-o ${given}: ${path} is a directory; give a file path.`);
  if (!statOrNull(dirname(path))?.isDirectory()) throw new UsageError(`-o ${given}: the folder ${dirname(path)} does not exist; create it first.`);
  const real = resolve(realpathSync(dirname(path)), basename(path));
  if (real.split(sep).includes(".delta")) {
    throw new UsageError(`-o ${given}: ${real} is inside a .delta folder, where the engine keeps its runs' files; write the result outside it.`);
  }
  return path;
}

/** Replaces the file whole: a reader sees the old content or the new, never half of it. `content` may be written piece by piece. */
export function writeOutputFile(path: string, content: string | ((write: (text: string) => void) => void)): void {
  try {
    const existing = statOrNull(path);
    writeFileAtomic(path, content, { mode: existing?.isFile() ? Number(existing.mode) & 0o7777 : NEW_FILE_MODE, exactMode: true });
  } catch (err) {
    // What went wrong making the content (a journal line that cannot be read) is its own error, not the file's.
    if (err instanceof DeltaError) throw err;
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
