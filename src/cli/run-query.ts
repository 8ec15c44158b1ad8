// The run `show` and `report` name: an id or --last, in the workspaces -w or --agent cover (cli/run-scope.ts).
import { UsageError } from "../errors.js";
import { locateRun, newestRun, type LocatedRun } from "../store/locate-run.js";
import { runScope } from "./run-scope.js";

export async function findRun(runId: string | undefined, flags: Record<string, unknown>, warn: (line: string) => void): Promise<LocatedRun> {
  if (runId !== undefined && flags.last) throw new UsageError("Give a run id or --last, not both.");
  if (runId !== undefined) return locateRun(await runScope(flags), runId);
  if (flags.last) return newestRun(await runScope(flags), warn);
  throw new UsageError("Which run? Give its id (see `delta list-runs -w <workspace>`) or --last.");
}
