// One folder for everything a test run leaves: TMPDIR points into it (for the tests and every process they start) and so does the run index (XDG_STATE_HOME); it is removed when the run ends, whatever a test left behind.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  // Each project of the run (unit, hosts) runs this: the first one's folder serves them all.
  if (process.env.DELTA_TESTS_ROOT !== undefined && process.env.TMPDIR === process.env.DELTA_TESTS_ROOT) return () => {};
  const root = mkdtempSync(join(tmpdir(), "delta-tests-"));
  // Tests that run the engine as another user reach their folders through it.
  chmodSync(root, 0o711);
  const before = { TMPDIR: process.env.TMPDIR, XDG_STATE_HOME: process.env.XDG_STATE_HOME, DELTA_TESTS_ROOT: process.env.DELTA_TESTS_ROOT };
  process.env.DELTA_TESTS_ROOT = root;
  process.env.TMPDIR = root;
  process.env.XDG_STATE_HOME = join(root, "state");
  return () => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(root, { recursive: true, force: true });
  };
}
