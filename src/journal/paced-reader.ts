// Streams a journal's events as streamJournal does, a window of bytes at a time with an awaited pause between windows: a consumer sending what it folds to a slower sink (a collector) holds a window's worth, never the journal.
import { closeSync, fstatSync } from "node:fs";
import { JournalError, errorMessage } from "../errors.js";
import { openRunFile } from "../safe-open.js";
import type { JournalEvent } from "./events.js";
import { readRange } from "./line-scanner.js";
import { refuseJsonArray, visitRange } from "./parse-lines.js";

/** Journal bytes parsed between two pauses; a window widens (doubling) only to hold a line longer than this. */
const WINDOW_BYTES = 1 << 20;

/**
 * Hands every event now in the journal at `path` to `visit`, in order, keeping none, and awaits `pause` after each window
 * of lines (a torn last line is left out with a warning, as streamJournal leaves it).
 */
export async function streamJournalPaced(path: string, visit: (event: JournalEvent) => void, pause: () => Promise<void>, options: { warn?: (line: string) => void } = {}): Promise<void> {
  let fd: number;
  try {
    fd = openRunFile(path);
  } catch (err) {
    throw new JournalError(`${path}: cannot open the journal (${errorMessage(err)})`, { cause: err });
  }
  try {
    const size = fstatSync(fd).size;
    refuseJsonArray(path, readRange(fd, 0, 64));
    let start = 0;
    let line = 1;
    let window = WINDOW_BYTES;
    while (start < size) {
      const end = Math.min(size, start + window);
      const visited = visitRange(fd, start, end, { path, firstLine: line, nextSeq: line }, visit);
      if (end === size) {
        if (visited.unterminated) visit(visited.unterminated);
        if (visited.tornBytes > 0) options.warn?.(`${path}: ignoring a torn last line (${visited.tornBytes} bytes with no newline, left by an interrupted write)`);
        return;
      }
      // A window ending mid-line leaves that line to the next one; a window holding no whole line is widened, with no pause.
      if (visited.lines === 0) {
        window *= 2;
        continue;
      }
      window = WINDOW_BYTES;
      start += visited.completeBytes;
      line += visited.lines;
      await pause();
    }
  } finally {
    closeSync(fd);
  }
}
