// The user's run index: a pointer per run, appended line by line, bounded to the last 1,000, skipped where it cannot be written, and never trusted beyond pointing.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { indexedRunsThatExist } from "../../src/store/locate-run.js";
import { RUNS_KEPT, indexedRuns, rememberRun, runIndexDir, runIndexFile } from "../../src/store/run-index.js";
import { removeDir, tempDir } from "../e2e/harness.js";

let root: string;
let dir: string;
beforeEach(() => {
  root = tempDir("delta-run-index-");
  dir = join(root, "state", "delta");
});
afterEach(() => removeDir(root));

/** A run folder as the engine leaves it: a journal in <workspace>/.delta/<run id>/. */
function makeRun(workDir: string, runId: string): void {
  mkdirSync(join(workDir, ".delta", runId), { recursive: true });
  writeFileSync(join(workDir, ".delta", runId, "journal.jsonl"), "");
}

describe("where the index is", () => {
  it("is $XDG_STATE_HOME/delta when that is absolute, else ~/.local/state/delta", () => {
    expect(runIndexDir({ XDG_STATE_HOME: "/srv/state" })).toBe("/srv/state/delta");
    expect(runIndexDir({ XDG_STATE_HOME: "relative/state" })).toMatch(/\/\.local\/state\/delta$/);
    expect(runIndexDir({})).toMatch(/\/\.local\/state\/delta$/);
  });
});

describe("the index", () => {
  it("is one private line per run, newest first when read, each run once", () => {
    rememberRun({ runId: "a", workDir: "/w1" }, dir);
    rememberRun({ runId: "b", workDir: "/w2" }, dir);
    rememberRun({ runId: "a", workDir: "/w1" }, dir);
    const lines = readFileSync(runIndexFile(dir), "utf8").trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([{ run_id: "a", work_dir: "/w1" }, { run_id: "b", work_dir: "/w2" }, { run_id: "a", work_dir: "/w1" }]);
    expect(statSync(runIndexFile(dir)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(indexedRuns(dir).map((run) => run.runId)).toEqual(["a", "b"]);
  });

  it(`holds the last ${RUNS_KEPT} runs: the file is set aside as it fills, and reading takes the last ${RUNS_KEPT} of the two`, () => {
    for (let n = 1; n <= 2 * RUNS_KEPT + 10; n += 1) rememberRun({ runId: `run-${n}`, workDir: "/w" }, dir);
    const runs = indexedRuns(dir);
    expect(runs).toHaveLength(RUNS_KEPT);
    expect(runs[0]!.runId).toBe(`run-${2 * RUNS_KEPT + 10}`);
    expect(runs.at(-1)!.runId).toBe(`run-${RUNS_KEPT + 11}`);
    const onDisk = ["runs.jsonl", "runs.1.jsonl"].map((name) => readFileSync(join(dir, name), "utf8").split("\n").length - 1);
    expect(onDisk[0]! + onDisk[1]!).toBeLessThanOrEqual(2 * RUNS_KEPT);
  });

  it("skips lines that are no pointer: not JSON, another shape, a relative folder, a run id that is a path", () => {
    mkdirSync(dir, { recursive: true });
    const lines = [
      "not json",
      JSON.stringify({ run_id: "ok", work_dir: "/w", at: "t" }),
      JSON.stringify({ run_id: "x" }),
      JSON.stringify({ run_id: "rel", work_dir: "w", at: "t" }),
      JSON.stringify({ run_id: "../../etc", work_dir: "/w", at: "t" }),
      "{\"run_id\": \"torn",
    ];
    writeFileSync(runIndexFile(dir), `${lines.join("\n")}\n`);
    expect(indexedRuns(dir).map((run) => run.runId)).toEqual(["ok"]);
  });

  it("is skipped silently where it cannot be written, and a missing index reads as empty", () => {
    mkdirSync(join(root, "state"), { recursive: true });
    writeFileSync(dir, "a file where the folder would be");
    expect(() => rememberRun({ runId: "a", workDir: "/w" }, dir)).not.toThrow();
    expect(() => rememberRun({ runId: "a", workDir: "/w" }, join(dir, "below-a-file"))).not.toThrow();
    rmSync(dir);
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o500);
    try {
      // As root the mode does not stop a write; what matters is that nothing throws.
      expect(() => rememberRun({ runId: "a", workDir: "/w" }, dir)).not.toThrow();
    } finally {
      chmodSync(dir, 0o700);
    }
    expect(indexedRuns(join(root, "no-such-folder"))).toEqual([]);
  });
});

describe("the runs it points at", () => {
  it("are the ones still there: a run moved or deleted since is passed over for the one before it", () => {
    const [ws1, ws2] = [join(root, "ws1"), join(root, "ws2")];
    makeRun(ws1, "first");
    makeRun(ws2, "second");
    makeRun(ws2, "third");
    for (const [runId, workDir] of [["first", ws1], ["second", ws2], ["third", ws2]] as const) rememberRun({ runId, workDir }, dir);
    expect(indexedRunsThatExist(5, dir).map((run) => run.runId)).toEqual(["third", "second", "first"]);
    rmSync(join(ws2, ".delta", "third"), { recursive: true });
    renameSync(ws1, join(root, "ws1-moved"));
    expect(indexedRunsThatExist(5, dir).map((run) => [run.runId, run.workDir])).toEqual([["second", ws2]]);
    expect(existsSync(join(root, "ws1-moved"))).toBe(true);
  });
});
