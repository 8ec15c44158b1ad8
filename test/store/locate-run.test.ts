// Finding a run by id or recency, in one workspace or across all of an agent's workspaces.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunRefusedError, UsageError } from "../../src/errors.js";
import { listScopedRuns, locateRun, newestRun, scopeWorkspaces } from "../../src/store/locate-run.js";
import { runPaths } from "../../src/store/run-dir.js";
import { writeMetadata } from "../../src/store/run-metadata.js";
import { parseRunId } from "../../src/store/run-id.js";

let agentHome: string;
beforeEach(() => {
  agentHome = mkdtempSync(join(tmpdir(), "delta-locate-run-"));
});
afterEach(() => {
  rmSync(agentHome, { recursive: true, force: true });
});

/** A completed run of this engine in `<agent>/workspaces/<workspace>`, last updated at `updatedAt`. */
function makeRun(workspace: string, runId: string, updatedAt: string): string {
  const workDir = join(agentHome, "workspaces", workspace);
  const paths = runPaths(workDir, parseRunId(runId));
  mkdirSync(paths.runDir, { recursive: true });
  writeFileSync(join(workDir, ".delta", "VERSION"), "1\n");
  const events = [
    { seq: 1, timestamp: updatedAt, type: "ENGINE_START", run_id: runId, agent_home: agentHome, work_dir: workDir, config: {}, engine_version: "0" },
    { seq: 2, timestamp: updatedAt, type: "USER_MESSAGE", content: `task of ${runId}` },
    { seq: 3, timestamp: updatedAt, type: "ENGINE_END", run_id: runId, status: "COMPLETED", final_iteration: 0 },
  ];
  writeFileSync(paths.journal, events.map((event) => `${JSON.stringify(event)}\n`).join(""));
  writeMetadata(paths, {
    run_id: runId, workspace_id: workspace, agent_name: "a", status: "COMPLETED", created_at: updatedAt, updated_at: updatedAt, end_time: updatedAt,
    initial_message: `task of ${runId}`, iterations: 0, max_iterations: 30, error: null, agent_home: agentHome, work_dir: workDir,
    pid: 1, hostname: "h", start_time_unix: 0, process_name: "node",
  });
  return workDir;
}

const noWarnings = (line: string): never => {
  throw new Error(`unexpected warning: ${line}`);
};

describe("locateRun", () => {
  it("finds a run id in whichever workspace of the agent holds it", () => {
    makeRun("W001", "a1", "2026-01-01T00:00:00.000Z");
    const w2 = makeRun("W002", "b2", "2026-01-02T00:00:00.000Z");
    expect(locateRun({ agentHome }, parseRunId("b2"))).toEqual({ runId: "b2", workDir: w2, paths: runPaths(w2, parseRunId("b2")) });
  });

  it("refuses an id found in two workspaces, naming both", () => {
    const w1 = makeRun("W001", "same", "2026-01-01T00:00:00.000Z");
    const w2 = makeRun("W002", "same", "2026-01-02T00:00:00.000Z");
    expect(() => locateRun({ agentHome }, parseRunId("same"))).toThrow(RunRefusedError);
    expect(() => locateRun({ agentHome }, parseRunId("same"))).toThrow(`${w1} and ${w2}`);
  });

  it("refuses an id no workspace of the agent has, and says how to list them", () => {
    makeRun("W001", "a1", "2026-01-01T00:00:00.000Z");
    expect(() => locateRun({ agentHome }, parseRunId("nope"))).toThrow(`delta list-runs --agent ${agentHome}`);
  });

  it("looks only in the given workspace when one is given", () => {
    makeRun("W001", "a1", "2026-01-01T00:00:00.000Z");
    const w2 = makeRun("W002", "b2", "2026-01-02T00:00:00.000Z");
    expect(() => locateRun({ workDir: w2 }, parseRunId("a1"))).toThrow(RunRefusedError);
  });
});

describe("newestRun", () => {
  it("is the most recently updated run across the agent's workspaces", () => {
    const w1 = makeRun("W001", "late", "2026-03-01T00:00:00.000Z");
    makeRun("W002", "early", "2026-01-01T00:00:00.000Z");
    expect(newestRun({ agentHome }, noWarnings)).toMatchObject({ runId: "late", workDir: w1 });
  });

  it("is the most recently updated run of one workspace", () => {
    const w1 = makeRun("W001", "old", "2026-01-01T00:00:00.000Z");
    makeRun("W001", "new", "2026-02-01T00:00:00.000Z");
    makeRun("W002", "newest-elsewhere", "2026-03-01T00:00:00.000Z");
    expect(newestRun({ workDir: w1 }, noWarnings).runId).toBe("new");
  });

  it("refuses when there is no run at all", () => {
    expect(() => newestRun({ agentHome }, noWarnings)).toThrow(RunRefusedError);
  });
});

describe("listing a scope", () => {
  it("merges the runs of every workspace, newest first, each with its workspace", () => {
    const w1 = makeRun("W001", "a", "2026-01-01T00:00:00.000Z");
    const w2 = makeRun("W002", "b", "2026-02-01T00:00:00.000Z");
    expect(listScopedRuns({ agentHome }, {}, noWarnings).map((run) => [run.run_id, run.work_dir])).toEqual([["b", w2], ["a", w1]]);
  });

  it("refuses a workspace that does not exist instead of finding nothing there", () => {
    expect(() => scopeWorkspaces({ workDir: join(agentHome, "missing") })).toThrow(UsageError);
  });

  it("has no workspaces for an agent that never ran", () => {
    expect(scopeWorkspaces({ agentHome })).toEqual([]);
  });
});
