// A skill's files as load_skill reads them: only regular text files inside the skill's folder after symlinks, bounded in bytes, never run.
import { closeSync, fstatSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { LOAD_SKILL } from "../../context/skills-listing.js";
import { errorMessage, FileRefusedError } from "../../errors.js";
import { openFolderFile, readOpenedFile } from "../../safe-open.js";

/** Bytes load_skill returns at most (a SKILL.md or another file of the skill); a larger SKILL.md is refused when the agent loads. */
export const MAX_SKILL_FILE_BYTES = 65_536;

/** Files a skill's body lists as readable; a folder with more says how many it left out. */
const MAX_LISTED_FILES = 50;
const MAX_LISTED_DEPTH = 4;

export type Outcome<T> = ({ ok: true } & T) | { ok: false; problem: string };

/** True when `target` is `dir` or lies below it (both absolute, normalized). */
export function isWithin(dir: string, target: string): boolean {
  const relative = path.relative(dir, target);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** The real path of `file` (relative to the skill's real folder `dir`), or why it may not be read. */
export function resolveSkillFile(dir: string, file: string): Outcome<{ path: string }> {
  if (file.includes("\0")) return { ok: false, problem: "holds a NUL character" };
  if (path.isAbsolute(file)) return { ok: false, problem: "is an absolute path; give a path relative to the skill's folder, e.g. reference.md" };
  const target = path.resolve(dir, file);
  if (!isWithin(dir, target)) return { ok: false, problem: "leads out of the skill's folder; a skill's files are read only from inside it" };
  let real: string;
  try {
    real = realpathSync(target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, problem: "is not a file of the skill" };
    return { ok: false, problem: `cannot be read (${errorMessage(err)})` };
  }
  if (!isWithin(dir, real)) return { ok: false, problem: "leads through a symbolic link out of the skill's folder; a skill's files are read only from inside it" };
  // Hidden files (.env, .git/) are not the skill's to show, whichever name leads to them.
  if (isHidden(path.relative(dir, target)) || isHidden(path.relative(dir, real))) return { ok: false, problem: "is hidden (a name starting with '.'); only a skill's visible files are read" };
  return { ok: true, path: real };
}

function isHidden(relative: string): boolean {
  return relative.split(path.sep).some((part) => part.startsWith("."));
}

/**
 * Reads a file of the skill's folder `dir` through the one safe open (no link out of the folder, even one put
 * in place since it was resolved; no waiting on a FIFO): a regular file of at most `maxBytes` holding no
 * NUL byte, as text.
 */
export function readBoundedText(dir: string, file: string, maxBytes: number): Outcome<{ text: string; bytes: number }> {
  let fd: number;
  try {
    fd = openFolderFile({ path: file, folder: dir });
  } catch (err) {
    if (err instanceof FileRefusedError) return { ok: false, problem: err.problem };
    return { ok: false, problem: `cannot be read (${errorMessage(err)})` };
  }
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) return { ok: false, problem: tooLarge(size, maxBytes) };
    // A file that grew since fstat is refused, not cut.
    const content = readOpenedFile(fd, maxBytes);
    if (content === null) return { ok: false, problem: `is more than ${maxBytes} bytes, the most ${LOAD_SKILL} reads` };
    if (content.includes(0)) return { ok: false, problem: `is binary (it holds NUL bytes; ${content.length} bytes): only text files are read` };
    return { ok: true, text: content.toString("utf8"), bytes: content.length };
  } catch (err) {
    return { ok: false, problem: `cannot be read (${errorMessage(err)})` };
  } finally {
    closeSync(fd);
  }
}

function tooLarge(size: number, maxBytes: number): string {
  return `is ${size} bytes, more than the ${maxBytes} bytes ${LOAD_SKILL} reads`;
}

/** The skill's files other than SKILL.md, relative to its folder, sorted; hidden entries and linked folders are not entered. */
export function listSkillFiles(dir: string): { files: string[]; more: boolean } {
  const files: string[] = [];
  let more = false;
  const walk = (relative: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(path.join(dir, relative), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const name = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (depth < MAX_LISTED_DEPTH) walk(name, depth + 1);
        continue;
      }
      if (name === "SKILL.md") continue;
      if (files.length === MAX_LISTED_FILES) {
        more = true;
        return;
      }
      files.push(name);
    }
  };
  walk("", 1);
  return { files, more };
}
