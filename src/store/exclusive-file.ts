// Creates a file whole and exclusively, on a local or a network file system: written and flushed under a hidden temporary name, then linked to its name, which fails when the name exists.
import { closeSync, fsyncSync, linkSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { PRIVATE_FILE_MODE } from "../private-modes.js";
import { randomHex } from "../random-hex.js";

/**
 * Creates `dir/name` holding `text`: true when this call created it, false when it already existed. Of any number of
 * processes on any number of hosts creating the same name, exactly one gets true, and no reader sees the file half written.
 */
export function createExclusive(dir: string, name: string, text: string): boolean {
  const temp = join(dir, `.${name}.${process.pid}.${randomHex(4)}.tmp`);
  const fd = openSync(temp, "wx", PRIVATE_FILE_MODE);
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(temp, join(dir, name));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    // Over NFS a link can succeed and still report an error (its reply was lost): the temporary file's link count tells.
    if (statSync(temp, { throwIfNoEntry: false })?.nlink === 2) return true;
    throw err;
  } finally {
    rmSync(temp, { force: true });
  }
}
