// One folder for everything a test run leaves: TMPDIR points into it (for the tests and every process they start) and so does the run index (XDG_STATE_HOME); it is removed when the run ends, whatever a test left behind.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "delta-tests-"));
  // Tests that run the engine as another user reach their folders through it.
  chmodSync(root, 0o711);
  const before = { TMPDIR: process.env.TMPDIR, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
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
