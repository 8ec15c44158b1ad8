// Fences a former holder that may still be alive off the journal: the run goes on in a copy renamed over journal.jsonl.
//
// The old holder's open descriptor then points at a file no one reads, so even a write it had already checked and
// was about to make cannot reach the run; its writer sees the swap at its next check and stops.
import { chmodSync, closeSync, constants, copyFileSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { syncDirectory, tempPathFor } from "../atomic-file.js";
import { PRIVATE_FILE_MODE } from "../../private-modes.js";

export function fenceJournal(journal: string): void {
  const temp = tempPathFor(journal);
  try {
    copyFileSync(journal, temp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    chmodSync(temp, PRIVATE_FILE_MODE);
    const fd = openSync(temp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, journal);
  } catch (err) {
    rmSync(temp, { force: true });
    // No journal yet: nothing to fence.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  syncDirectory(dirname(journal));
}
