// The test run's one folder: every temporary folder lands in it, and it is gone when the run ends.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { execa } from "execa";
import { expect, it } from "vitest";
import setup from "./global-setup.js";

it("this run's temporary folders and run index are inside one delta-tests- folder, and so are those of the processes it starts", async () => {
  const root = tmpdir();
  expect(basename(root)).toMatch(/^delta-tests-/);
  expect(process.env.XDG_STATE_HOME).toBe(join(root, "state"));
  const child = await execa("sh", ["-c", "mktemp -d"]);
  expect(dirname(child.stdout)).toBe(root);
});

it("removes the folder and everything a test left in it, and gives TMPDIR and XDG_STATE_HOME back; a second project of the run shares the first one's folder", () => {
  const before = { TMPDIR: process.env.TMPDIR, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
  // As a run that has not made its folder yet.
  const outerRoot = process.env.DELTA_TESTS_ROOT;
  delete process.env.DELTA_TESTS_ROOT;
  const teardown = setup();
  const root = process.env.TMPDIR!;
  try {
    expect(dirname(root)).toBe(before.TMPDIR);
    mkdirSync(join(root, "left-behind", "deep"), { recursive: true });
    writeFileSync(join(root, "left-behind", "deep", "file"), "x");
    expect(setup()).toBeTypeOf("function");
    expect(process.env.TMPDIR).toBe(root);
  } finally {
    teardown();
    process.env.DELTA_TESTS_ROOT = outerRoot;
  }
  expect(existsSync(root)).toBe(false);
  expect({ TMPDIR: process.env.TMPDIR, XDG_STATE_HOME: process.env.XDG_STATE_HOME }).toEqual(before);
});
