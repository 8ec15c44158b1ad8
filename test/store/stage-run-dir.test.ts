// A run directory appears only complete: it is built under a hidden .claim-* name and published by rename.
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunRefusedError } from "../../src/errors.js";
import { listRuns } from "../../src/store/list-runs.js";
import { STAGING_PREFIX, runPaths, stageRunDir } from "../../src/store/run-dir.js";
import { removeDir, tempDir } from "../e2e/harness.js";
import { parseRunId } from "../../src/store/run-id.js";

let workDir: string;
beforeEach(() => {
  workDir = tempDir("delta-stage-");
});
afterEach(() => removeDir(workDir));

describe("stageRunDir", () => {
  it("builds the run under a hidden name and shows it under its id only once published", () => {
    const staged = stageRunDir(workDir, parseRunId("r1"));
    expect(existsSync(runPaths(workDir, parseRunId("r1")).runDir)).toBe(false);
    expect(staged.paths.runDir.split("/").pop()).toMatch(new RegExp(`^\\${STAGING_PREFIX}r1\\.`));
    expect(existsSync(staged.paths.invocationsDir)).toBe(true);

    const paths = staged.publish();
    expect(paths).toEqual(runPaths(workDir, parseRunId("r1")));
    expect(existsSync(paths.toolExecutionsDir)).toBe(true);
    expect(readdirSync(join(workDir, ".delta")).filter((name) => name.startsWith("."))).toEqual([]);
  });

  it("refuses to publish an id another process claimed meanwhile, and removes its staged directory", () => {
    const staged = stageRunDir(workDir, parseRunId("r1"));
    stageRunDir(workDir, parseRunId("r1")).publish();
    expect(() => staged.publish()).toThrow(RunRefusedError);
    expect(existsSync(staged.paths.runDir)).toBe(false);
  });

  it("lets list-runs skip a staged directory a crash left behind", () => {
    stageRunDir(workDir, parseRunId("crashed"));
    mkdirSync(join(workDir, ".delta", ".hidden-by-user"));
    const warnings: string[] = [];
    expect(listRuns(workDir, {}, (line) => warnings.push(line))).toEqual([]);
    expect(warnings).toEqual([]);
    expect(() => stageRunDir(workDir, parseRunId("crashed")).publish()).not.toThrow();
  });
});
