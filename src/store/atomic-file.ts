// Replaces a file atomically: readers see the old content or the new, never a half-written file.
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { randomHex } from "../random-hex.js";

interface AtomicWriteOptions {
  /** fsync the file and its directory, for states that must survive a power cut. */
  durable?: boolean;
  /** The file's permissions when created (before the umask); default 0o666. */
  mode?: number;
  /** Give the file exactly `mode`, whatever the umask (an existing file's mode, kept). */
  exactMode?: boolean;
}

/** `content`: the text, or a function that writes it piece by piece (a report too large to hold as one string). */
export function writeFileAtomic(path: string, content: string | ((write: (text: string) => void) => void), options: AtomicWriteOptions = {}): void {
  const temp = tempPathFor(path);
  try {
    const fd = openSync(temp, "wx", options.mode ?? 0o666);
    try {
      if (options.exactMode && options.mode !== undefined) fchmodSync(fd, options.mode);
      if (typeof content === "string") writeSync(fd, content);
      else content((text) => void writeSync(fd, text));
      if (options.durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  if (options.durable) syncDirectory(dirname(path));
}

/** A name unique to this process and call, beside the target so rename stays on one file system. */
export function tempPathFor(path: string): string {
  return `${path}.${process.pid}.${randomHex(4)}.tmp`;
}

/** fsync of a directory, which makes a rename in it durable. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
