// listRuns reports real runs only: directories in .delta/ without journal or metadata are not runs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { listRuns } from "../../src/store/list-runs.js";
import { runPaths } from "../../src/store/run-dir.js";
import { writeMetadata } from "../../src/store/run-metadata.js";
import { parseRunId } from "../../src/store/run-id.js";

let workDir: string;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "delta-list-runs-"));
});
afterEach(() => {
  rmSync(workDir, { recursive: true, force: true });
});

const at = "2026-01-01T00:00:00.000Z";
const journal = () => [
  { seq: 1, timestamp: at, type: "ENGINE_START", run_id: "done-1", agent_home: "/a", work_dir: workDir, config: {}, engine_version: "0" },
  { seq: 2, timestamp: at, type: "USER_MESSAGE", content: "say hi" },
  { seq: 3, timestamp: at, type: "ENGINE_END", run_id: "done-1", status: "COMPLETED", final_iteration: 0 },
];

it("skips a half-claimed run directory and other folders kept in .delta/, without warnings", () => {
  const deltaDir = join(workDir, ".delta");
  mkdirSync(join(deltaDir, "done-1"), { recursive: true });
  writeFileSync(join(deltaDir, "VERSION"), "1\n");
  writeFileSync(join(deltaDir, "done-1", "journal.jsonl"), journal().map((event) => `${JSON.stringify(event)}\n`).join(""));
  writeMetadata(runPaths(workDir, parseRunId("done-1")), {
    run_id: "done-1", workspace_id: "W001", agent_name: "a", status: "COMPLETED", created_at: at, updated_at: at, end_time: at,
    initial_message: "say hi", iterations: 0, max_iterations: 30, error: null, agent_home: "/a", work_dir: workDir,
    pid: 1, hostname: "h", start_time_unix: 0, process_name: "node",
  });
  mkdirSync(join(deltaDir, "half-claimed", "io", "invocations"), { recursive: true });
  mkdirSync(join(deltaDir, "context_artifacts"), { recursive: true });
  writeFileSync(join(deltaDir, "context_artifacts", "summary.md"), "# Memory\n");

  const warnings: string[] = [];
  const runs = listRuns(workDir, {}, (line) => warnings.push(line));
  expect(runs.map((run) => [run.run_id, run.status, run.task_summary])).toEqual([["done-1", "COMPLETED", "say hi"]]);
  expect(warnings).toEqual([]);
});

it("still warns about a run whose metadata exists but whose journal is gone", () => {
  const runDir = join(workDir, ".delta", "broken");
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, "metadata.json"), "{}");
  const warnings: string[] = [];
  expect(listRuns(workDir, {}, (line) => warnings.push(line))).toEqual([]);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/^run broken: skipped: .*journal/);
});

it("lists a run at rest from its metadata while the journal keeps the size its end was written with, and from the journal once it changed", () => {
  const paths = runPaths(workDir, parseRunId("done-1"));
  mkdirSync(paths.runDir, { recursive: true });
  const text = journal().map((event) => `${JSON.stringify(event)}\n`).join("");
  // Bytes of the right size that are no journal: listing from metadata reads none of them.
  writeFileSync(paths.journal, "x".repeat(Buffer.byteLength(text)));
  writeMetadata(paths, {
    run_id: "done-1", workspace_id: "W001", agent_name: "a", status: "COMPLETED", created_at: at, updated_at: at, end_time: at,
    initial_message: "say hi", iterations: 0, max_iterations: 30, error: null, agent_home: "/a", work_dir: workDir,
    pid: 1, hostname: "h", start_time_unix: 0, process_name: "node", journal_bytes: Buffer.byteLength(text),
  });
  const warnings: string[] = [];
  expect(listRuns(workDir, {}, (line) => warnings.push(line)).map((run) => [run.run_id, run.status, run.task_summary, run.iterations])).toEqual([["done-1", "COMPLETED", "say hi", 0]]);
  expect(warnings).toEqual([]);

  // Another size (written since by a process that died before metadata): the journal decides.
  writeFileSync(paths.journal, text.replace('"status":"COMPLETED"', '"status":"FAILED"'));
  expect(listRuns(workDir, {}, (line) => warnings.push(line)).map((run) => run.status)).toEqual(["FAILED"]);
});
