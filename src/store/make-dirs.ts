// mkdir -p that names the real cause: Node's recursive mkdir reports a read-only parent as ENOENT.
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** Creates `dir` and any missing parents, one level at a time, so EROFS/EACCES surface as such. */
export function makeDirs(dir: string): void {
  const parent = dirname(dir);
  if (parent !== dir && !existsSync(parent)) makeDirs(parent);
  try {
    mkdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}
