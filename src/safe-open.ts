// The one safe way to open a file the engine did not make itself — a run file under .delta/, a file of a workspace or an agent's folder: no link out, no waiting on a FIFO, a regular file only; read whole within a bound.
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import { humanBytes } from "./byte-size.js";
import { FileRefusedError, RunFileError } from "./errors.js";
import { fsError } from "./fs-errors.js";
import { pausePoint } from "./pause-point.js";
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
    const bytes = readOpenedFile(fd, maxBytes);
    if (bytes === null) throw new RunFileError(`${path} is larger than ${maxBytes} bytes, more than the engine ever writes there; it is refused`);
    return bytes.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Where a file of a workspace or an agent's folder is, as a caller names it. */
interface FolderPlace {
  /** The file as named (absolute, or relative to the current directory). */
  path: string;
  /**
   * The folder it was named in (the workspace for `${CWD}/…`, the agent's folder for `${AGENT_HOME}/…`): no symbolic link may
   * lead out of it. Null for a file the user named on the command line, whose links are the user's and are followed.
   */
  folder: string | null;
  /** Paths every box is shown empty (the secret folders of $HOME, `deny_read:`): a link may not lead into one. So may no link lead to a `.env`. */
  hidden?: readonly string[];
}

/** A file of a workspace or an agent's folder, to be read whole. */
export interface FolderFile extends FolderPlace {
  /** Refused past this many bytes, read until end of file. */
  maxBytes: number;
  /** Says what the bound is for, in a refusal: "a context file". */
  what: string;
}

/**
 * The bytes of `file`, read so that nothing a tool planted can make the engine read what a box hides, wait, or
 * grow: after resolving links it must lie inside its folder and not be hidden, be a regular file (a FIFO,
 * device or socket is refused before it is read), and hold at most `maxBytes`, read until end of file.
 * A missing file throws the system's ENOENT error as it is, so callers keep their own "not there" handling;
 * anything refused throws FileRefusedError naming the path, why, and the fix.
 *
 * The check is made on the resolved path, then again on the descriptor (/proc/self/fd names what was
 * really opened): a folder swapped for a link between the two is caught. Node has no openat, and a walk
 * component by component (through /proc/self/fd/N/name) would cost an open per folder and refuse links
 * that stay inside, which authors use.
 */
export function readFolderFile(file: FolderFile): Buffer {
  return readChecked(file, openCheckedFolderFile(file));
}

/**
 * readFolderFile, or null when the file is not there. An optional file that is missing (a workspace's DELTA.md, read
 * every iteration) is found so by one lstat, without the system error a failed resolution builds (~35 µs an iteration).
 */
export function readFolderFileIfThere(file: FolderFile): Buffer | null {
  return readCheckedIfThere(file)?.bytes ?? null;
}

/** readFolderFileIfThere's bytes, with what the checks passed when the name led to the file with no link (null otherwise). */
function readCheckedIfThere(file: FolderFile): { bytes: Buffer; passed: PassedFile | null } | null {
  let checked: CheckedOpen;
  try {
    if (lstatSync(path.resolve(file.path), { throwIfNoEntry: false }) === undefined) return null;
    checked = openCheckedFolderFile(file);
  } catch (err) {
    if (isMissingFile(err)) return null;
    throw err;
  }
  return { bytes: readChecked(file, checked), passed: checked.direct ? passedFile(checked.stats) : null };
}

/** The whole of the file the checks opened, its descriptor closed after; refused past its bound. */
function readChecked(file: FolderFile, checked: CheckedOpen): Buffer {
  try {
    const bytes = readOpenedFile(checked.fd, file.maxBytes, checked.stats.size);
    if (bytes === null) throw tooLarge(file);
    return bytes;
  } finally {
    closeSync(checked.fd);
  }
}

/** The descriptor of `file` opened for reading, with readFolderFile's refusals; the caller reads it (readOpenedFile) and closes it. */
export function openFolderFile(file: FolderPlace): number {
  return openCheckedFolderFile(file).fd;
}

/** A folder file opened after its checks: its descriptor, its fstat, and whether its name led to it with no link on the way. */
interface CheckedOpen {
  fd: number;
  stats: Stats;
  direct: boolean;
}

function openCheckedFolderFile(file: FolderPlace): CheckedOpen {
  const named = path.resolve(file.path);
  // ENOENT and ENOTDIR, a dangling link included, reach the caller as they are: the file is not there.
  const real = realpathSync.native(named);
  const folder = file.folder === null ? null : realpathSync.native(file.folder);
  checkPlace(file, named, real, folder);
  const before = lstatSync(real);
  if (!before.isFile()) throw refused(file, `${isA(named, real)} ${kindOf(before)}, not a regular file`, "put a regular file there");
  pausePoint("folder-file-resolved", path.basename(named));
  let fd: number;
  try {
    fd = openSync(real, FOLDER_FILE_FLAGS);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw refused(file, "was replaced by a symbolic link while it was being opened", "remove the link");
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw refused(file, `${isA(named, real)} ${kindOf(stats)}, not a regular file`, "put a regular file there");
    const opened = openedPath(fd);
    if (opened !== null && opened !== real) checkPlace(file, named, opened, folder);
    return { fd, stats, direct: named === real && opened === real };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

const FOLDER_FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** A file the checks passed, as it was then: a write, a rename, a link or a chmod moves its ctime. */
interface PassedFile {
  dev: number;
  ino: number;
  ctimeMs: number;
}

/** Places a rereader remembers at most; past it, it forgets them all and checks each again. */
const MAX_REMEMBERED_PLACES = 64;

/**
 * readFolderFileIfThere for a file read again and again (a context file, every iteration). What the checks passed is
 * remembered per place; the same inode found again at its name, untouched since (same ctime) and reached with no link
 * (lstat of the name, then fstat of what opening it without following a link gave), is read with no second resolution:
 * 6 system calls instead of about 16. Anything else (another inode, a link, a changed or missing file) takes the checks again.
 */
export function folderFileRereader(): (file: FolderFile) => Buffer | null {
  const passed = new Map<string, PassedFile>();
  return (file) => {
    const named = path.resolve(file.path);
    const key = JSON.stringify([named, file.folder, file.hidden ?? []]);
    const known = passed.get(key);
    if (known !== undefined) {
      const again = rereadIfSame(named, file.maxBytes, known);
      if (again !== null) return again;
      passed.delete(key);
    }
    const read = readCheckedIfThere(file);
    if (read?.passed) {
      if (passed.size >= MAX_REMEMBERED_PLACES) passed.clear();
      passed.set(key, read.passed);
    }
    return read?.bytes ?? null;
  };
}

/** The bytes of the file at `named` (within `maxBytes`) when it is still the file `known` describes; null for anything else. */
function rereadIfSame(named: string, maxBytes: number, known: PassedFile): Buffer | null {
  const now = lstatSync(named, { throwIfNoEntry: false });
  if (now === undefined || !isSameFile(now, known)) return null;
  let fd: number;
  try {
    fd = openSync(named, FOLDER_FILE_FLAGS);
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd);
    return isSameFile(stats, known) ? readOpenedFile(fd, maxBytes, stats.size) : null;
  } finally {
    closeSync(fd);
  }
}

function passedFile(stats: Stats): PassedFile {
  return { dev: stats.dev, ino: stats.ino, ctimeMs: stats.ctimeMs };
}

function isSameFile(stats: Stats, known: PassedFile): boolean {
  return stats.isFile() && stats.dev === known.dev && stats.ino === known.ino && stats.ctimeMs === known.ctimeMs;
}

/** Refuses a file whose real path leaves its folder, or that a link leads to a path boxes are shown empty. */
function checkPlace(file: FolderPlace, named: string, real: string, folder: string | null): void {
  if (folder !== null && !isWithin(folder, real)) {
    throw refused(file, `leads through a symbolic link to ${real}, outside ${folder} where it is named (a tool could have planted the link)`, "put the file itself there, or name its real path");
  }
  const followed = folder === null ? named !== real : path.relative(path.resolve(file.folder ?? "/"), named) !== path.relative(folder, real);
  if (!followed) return;
  const toEnv = path.basename(real) === ".env" && path.basename(named) !== ".env";
  const secret = toEnv ? real : (file.hidden ?? []).find((hidden) => isWithin(hidden, real));
  if (secret !== undefined) throw refused(file, `leads through a symbolic link to ${real}, which every box is shown empty (a secret a tool could have planted the link to)`, "remove the link");
}

/** The path the kernel says `fd` was opened at, or null where there is no /proc (no box is made there either). */
function openedPath(fd: number): string | null {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/** "is", or for a file reached through a link, "leads to <real>, which is". */
function isA(named: string, real: string): string {
  return named === real ? "is" : `leads to ${real}, which is`;
}

function tooLarge(file: FolderFile): FileRefusedError {
  return refused(file, `is larger than ${humanBytes(file.maxBytes)} (${file.maxBytes} bytes), the bound of ${file.what}`, "make it smaller");
}

function refused(file: FolderPlace, problem: string, fix: string): FileRefusedError {
  return new FileRefusedError(`${file.path} ${problem}; it is refused: ${fix}`, { problem: `${problem}; it is refused: ${fix}` });
}

/** True when `target` is `dir` or lies below it (both absolute and resolved). */
function isWithin(dir: string, target: string): boolean {
  const relative = path.relative(dir, target);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** The bytes of `fd` read until end of file (never trusting its size, `size` only sizing the first read), or null once they pass `maxBytes`. */
export function readOpenedFile(fd: number, maxBytes: number, size = fstatSync(fd).size): Buffer | null {
  if (size > maxBytes) return null;
  const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(size + 1, 4096)));
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const read = readSync(fd, buffer, 0, buffer.length, null);
    if (read === 0) break;
    total += read;
    if (total > maxBytes) return null;
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks, total);
}

/** True when `err` says the file is not there (rather than refused or unreadable). */
export function isMissingFile(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function kindOf(stats: ReturnType<typeof fstatSync>): string {
  if (stats.isFIFO()) return "a FIFO (named pipe), which would wait for a writer";
  if (stats.isDirectory()) return "a directory";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}
