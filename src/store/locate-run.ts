// Finds runs by id or by recency: in one workspace, or across every workspace of an agent.
import { basename } from "node:path";
import shellQuote from "shell-quote";
import { RunRefusedError, UsageError } from "../errors.js";
import { applyFilter, leftoverIdsIn, listRuns, type ListFilter, type RunSummary } from "./list-runs.js";
import { readOriginalRun } from "./original-run.js";
import { indexedRuns } from "./run-index.js";
import { findRunDir, isDirectory, runPaths, type RunPaths } from "./run-dir.js";
import type { RunId } from "./run-id.js";
import { listWorkspaces } from "./workspace.js";

/** Where to look: one workspace (`-w`), or all of an agent's workspaces (`--agent`). */
export type RunScope = { workDir: string } | { agentHome: string };

export interface LocatedRun {
  runId: RunId;
  workDir: string;
  paths: RunPaths;
}

/** The workspaces a scope covers; a `-w` that is not a directory is refused (126), an agent without workspaces has none. */
export function scopeWorkspaces(scope: RunScope): string[] {
  if ("agentHome" in scope) return listWorkspaces(scope.agentHome);
  if (!isDirectory(scope.workDir)) throw new UsageError(`-w ${scope.workDir}: no such directory; give the workspace that holds the runs`);
  return [scope.workDir];
}

/** The run with this id; refused (126) when no workspace of the scope has it, or when two do (naming both). */
export function locateRun(scope: RunScope, runId: RunId): LocatedRun {
  if ("workDir" in scope) return continuable({ runId, workDir: scope.workDir, paths: findRunDir(scope.workDir, runId) });
  const holders = listWorkspaces(scope.agentHome).filter((workDir) => isDirectory(runPaths(workDir, runId).runDir));
  const [only, second] = holders;
  if (only === undefined) {
    throw new RunRefusedError(
      `no run ${runId} in any workspace of the agent ${scope.agentHome}; list its runs with \`delta list-runs --agent ${scope.agentHome}\``,
    );
  }
  if (second !== undefined) {
    throw new RunRefusedError(
      `run id ${runId} is in ${holders.length} workspaces of the agent ${scope.agentHome}: ${holders.join(" and ")}; choose one with -w <workspace>`,
    );
  }
  return continuable({ runId, workDir: only, paths: findRunDir(only, runId) });
}

/** A run of the original Delta Engine is read (listed), never continued: its journal is not this engine's. */
function continuable(run: LocatedRun): LocatedRun {
  const original = readOriginalRun(run.paths);
  if (original === null) return run;
  throw new RunRefusedError(
    `run ${run.runId} in ${run.workDir} was made by the original Delta Engine, whose journal this engine cannot continue; ` +
      `start a new run from its task instead: ${shellQuote.quote(["delta", "run", "--agent", original.agent_ref, "-w", run.workDir, "-m", original.task])}`,
  );
}

/** Every run of the scope, newest first (the order of `delta list-runs`), filtered. */
export function listScopedRuns(scope: RunScope, filter: ListFilter, warn: (line: string) => void): RunSummary[] {
  const runs = scopeWorkspaces(scope).flatMap((workDir) => listRuns(workDir, {}, warn));
  return applyFilter(runs, filter);
}

/** The leftover run folders of the scope (run-dir.ts isLeftover): not runs, but ids that are taken until they go. */
export function listScopedLeftovers(scope: RunScope): { workDir: string; runId: RunId }[] {
  return scopeWorkspaces(scope).flatMap((workDir) => leftoverIdsIn(workDir).map((runId) => ({ workDir, runId })));
}

/** The newest run of the scope (the first line of `delta list-runs`); refused (126) when there is none. */
export function newestRun(scope: RunScope, warn: (line: string) => void): LocatedRun {
  const newest = newestRunIn(scope, warn);
  if (newest !== null) return newest;
  const where = "workDir" in scope ? `the workspace ${scope.workDir}` : `any workspace of the agent ${scope.agentHome} (${basename(scope.agentHome)}/workspaces/)`;
  throw new RunRefusedError(
    `no runs in ${where}. A run started with --agent <dir> is in that agent's workspaces, one started with -w <dir> in that folder: ` +
      `give the same --agent or -w (\`delta list-runs --agent <dir>\` lists them), or start one: delta run --agent <dir> "<task>"`,
  );
}

/** The newest run of the scope, or null when it has none. */
export function newestRunIn(scope: RunScope, warn: (line: string) => void): LocatedRun | null {
  const [newest] = listScopedRuns(scope, {}, warn).filter((run) => !run.original_engine);
  return newest === undefined ? null : locateRun({ workDir: newest.work_dir }, newest.run_id);
}

/** The newest runs the user's run index points at that are still where it points (moved, deleted or unreadable ones skipped), newest first. */
export function indexedRunsThatExist(limit: number, indexDir?: string): LocatedRun[] {
  const found: LocatedRun[] = [];
  for (const run of indexedRuns(indexDir)) {
    if (found.length >= limit) break;
    if (!isDirectory(runPaths(run.workDir, run.runId).runDir)) continue;
    try {
      found.push(locateRun({ workDir: run.workDir }, run.runId));
    } catch {
      // Pointers are never trusted beyond pointing: a run that is not one (any more) is passed over.
    }
  }
  return found;
}
