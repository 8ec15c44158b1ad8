// The run `show`, `report`, `export` and `continue` name: an id or --last, in the workspaces -w or --agent cover (cli/run-scope.ts), else the user's most recent run anywhere.
import { basename } from "node:path";
import { RunRefusedError, UsageError } from "../errors.js";
import { indexedRunsThatExist, locateRun, newestRun, newestRunIn, type LocatedRun, type RunScope } from "../store/locate-run.js";
import { runFolderPaths, type RunPaths } from "../store/run-dir.js";
import { runIndexFile } from "../store/run-index.js";
import { parseRunId, type RunId } from "../store/run-id.js";
import { runScope } from "./run-scope.js";

export async function findRun(runId: RunId | undefined, flags: Record<string, unknown>, warn: (line: string) => void): Promise<LocatedRun> {
  if (runId !== undefined && flags.last) throw new UsageError("Give a run id or --last, not both.");
  if (runId !== undefined) return locateRun(await runScope(flags), runId);
  if (flags.last) return lastRun(flags, warn);
  throw new UsageError("Which run? Give its id (see `delta list-runs -w <workspace>`) or --last.");
}

/**
 * A run named by its id, looked up where `show` looks (-w, --agent, else where `run` puts runs), or by its folder's path:
 * a word with a `/` in it or starting with `.`, which no run id has.
 */
export async function findRunOrFolder(word: string, flags: Record<string, unknown>): Promise<{ runId: string; paths: RunPaths }> {
  if (word.includes("/") || word.startsWith(".")) {
    const paths = runFolderPaths(word);
    return { runId: basename(paths.runDir), paths };
  }
  return locateRun(await runScope(flags), parseRunId(word));
}

/**
 * --last: the newest run where -w or --agent point. With neither, the newest where `run` puts runs started here, and
 * when there is none, the user's most recent run anywhere (the run index), said on stderr with where it is.
 */
export async function lastRun(flags: Record<string, unknown>, warn: (line: string) => void): Promise<LocatedRun> {
  const scope = await runScope(flags);
  if (flags.workDir !== undefined || flags.agent !== undefined) return newestRun(scope, warn);
  const here = newestRunIn(scope, warn);
  if (here !== null) return here;
  const [indexed] = indexedRunsThatExist(1);
  if (indexed === undefined) {
    throw new RunRefusedError(
      `no runs in ${whereRunsAre(scope)}, and your run index (${runIndexFile()}) points at none that still exists. ` +
        `A run started with --agent <dir> is in that agent's workspaces, one started with -w <dir> in that folder: give the same --agent or -w, ` +
        `or start one: delta run --agent <dir> "<task>"`,
    );
  }
  warn(`no runs in ${whereRunsAre(scope)}: taking your most recent run, ${indexed.runId} in ${indexed.workDir} (from ${runIndexFile()})`);
  return indexed;
}

export function whereRunsAre(scope: RunScope): string {
  return "agentHome" in scope ? `the workspaces of the agent ${scope.agentHome}` : scope.workDir;
}
