// The one safe way to open a file under .delta/: no final symlink, no waiting on a FIFO, a regular file only; read whole within a bound.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { RunFileError } from "./errors.js";
import { fsError } from "./fs-errors.js";
import { PRIVATE_FILE_MODE } from "./private-modes.js";

/** The bound of a small run file read whole (metadata.json, owner records, VERSION, interaction/, io records). */
const SMALL_RUN_FILE_BYTES = 16 << 20;

/**
 * Opens `path` for reading without following a final symlink and without blocking (a FIFO would
 * wait for a writer forever), then refuses anything but a regular file, naming it. A missing file
 * throws the system's ENOENT error as it is, so callers keep their own "not there" handling.
 */
export function openRunFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new RunFileError(`${path} is a symbolic link; the engine reads only files it wrote (regular files), so it is refused`, { cause: err });
    throw err;
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new RunFileError(`${path} is ${kindOf(stats)}, not a regular file; the engine reads only files it wrote, so it is refused`);
  }
  return fd;
}

/**
 * Opens `path` (`what` names it in messages, e.g. "the journal") to read and append, creating it
 * private, with the same refusals as openRunFile: a file the engine appends to is one it made.
 */
export function openRunFileForAppend(path: string, what: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new RunFileError(`${path} is a symbolic link; the engine writes ${what} only to a file it made, so it is refused`, { cause: err });
    throw fsError(`Cannot open ${what} ${path} for writing`, err);
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new RunFileError(`${path} is ${kindOf(stats)}, not a regular file; the engine writes ${what} only to a file it made, so it is refused`);
  }
  return fd;
}

/** The whole of a small run file as UTF-8, read until end of file (never trusting a size), refused past `maxBytes`. */
export function readRunFile(path: string, maxBytes = SMALL_RUN_FILE_BYTES): string {
  const fd = openRunFile(path);
  try {
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(fstatSync(fd).size + 1, 4096)));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      total += read;
      if (total > maxBytes) throw new RunFileError(`${path} is larger than ${maxBytes} bytes, more than the engine ever writes there; it is refused`);
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
    return Buffer.concat(chunks, total).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** True when `err` says the file is not there (rather than refused or unreadable). */
export function isMissingFile(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function kindOf(stats: ReturnType<typeof fstatSync>): string {
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isDirectory()) return "a directory";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}
