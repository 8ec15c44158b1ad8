// Writes a file of the build whole or not at all (a temporary file renamed over it), so a `delta` started while the build runs reads the old file or the new one, never half of one.
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export function writeInPlace(path, content) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, content);
    pauseBefore(basename(path));
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * The engine's pause point `build-write:<file>` (src/pause-point.ts has the protocol): a race test stops the build
 * here, with the file written beside its place and not yet in it, and runs `delta` meanwhile.
 */
function pauseBefore(name) {
  const point = `build-write:${name}`;
  if (!process.env.DELTA_TEST_PAUSE_AT?.split(",").includes(point)) return;
  const dir = process.env.DELTA_TEST_PAUSE_DIR ?? ".";
  writeFileSync(join(dir, `${point}.${process.pid}.reached`), "");
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(join(dir, `${point}.go`))) Atomics.wait(sleeper, 0, 0, 10);
}
