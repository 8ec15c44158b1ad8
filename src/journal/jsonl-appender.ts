// The one appender of a run's JSONL files (journal.jsonl, io/invocations/request-parts.jsonl): opened the safe way, a torn tail cut, every write whole or undone.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, writeSync } from "node:fs";
import { EngineError, errorMessage } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { openRunFileForAppend } from "../safe-open.js";

/** What the file's owner keeps of what an earlier process left: `bytes` from the start, and a newline after them when its last line is whole but unterminated. */
export interface KeptTail {
  bytes: number;
  terminate?: boolean;
}

export interface JsonlAppender {
  /** The open file: for the owner's own checks (fstat), never written through. */
  readonly fd: number;
  /** Bytes in the file as this appender left it. */
  readonly size: number;
  /** Writes `bytes` (whole lines) at the end; a write that fails part-way is cut off, so no fragment is glued to the next line. */
  append(bytes: Buffer): void;
  /** Flushes to disk. */
  sync(): void;
  /** The file was renamed with its directory: messages name it at `path` from now on. */
  moved(path: string): void;
  close(): void;
}

/**
 * Opens `path` (`what` names it in messages: "the journal") to append, after `keep` has read what is there (its size
 * given) and said how much of it stands: the rest, a line torn by a crash, is cut before anything is appended.
 */
export function openJsonlAppender(path: string, what: string, keep: (fd: number, size: number) => KeptTail): JsonlAppender {
  const fd = openRunFileForAppend(path, what);
  try {
    return createAppender(fd, path, what, keep(fd, fstatSync(fd).size));
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function createAppender(fd: number, openedAt: string, what: string, kept: KeptTail): JsonlAppender {
  let path = openedAt;
  if (kept.bytes < fstatSync(fd).size) ftruncateSync(fd, kept.bytes);
  let size = kept.bytes;
  // Set when a failed write's fragment could not be cut: the file would then hold a torn line between two events.
  let broken: string | null = null;
  const appender: JsonlAppender = {
    fd,
    get size() {
      return size;
    },
    append(bytes) {
      if (broken) throw new EngineError(`${capitalized(what)} ${path} can no longer be written: ${broken}`);
      try {
        writeAll(fd, bytes);
      } catch (err) {
        undoPartialWrite();
        throw fsError(`Cannot append to ${what} ${path}`, err);
      }
      size += bytes.length;
    },
    sync() {
      try {
        fsyncSync(fd);
      } catch (err) {
        throw fsError(`Cannot flush ${what} ${path} to disk`, err);
      }
    },
    moved(to) {
      path = to;
    },
    close() {
      closeSync(fd);
    },
  };
  if (kept.terminate) appender.append(NEWLINE);
  return appender;

  function undoPartialWrite(): void {
    try {
      ftruncateSync(fd, size);
    } catch (err) {
      broken = `an earlier write failed and its fragment could not be removed (${errorMessage(err)})`;
    }
  }
}

const NEWLINE = Buffer.from("\n");

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** writeSync may write less than asked (a full disk part-way, a signal): the rest follows until all is written or it throws. */
function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}
