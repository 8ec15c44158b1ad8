// The flags that name a run (id, -w, --agent, --last), shared by `show` and `report`.
import { resolve } from "node:path";
import type { RunQuery } from "../store/locate-run.js";
import { optionalString } from "./options.js";

export function runQuery(runId: string | undefined, flags: Record<string, unknown>): RunQuery {
  const workDir = optionalString("-w/--work-dir", flags.workDir);
  const agentHome = optionalString("--agent", flags.agent);
  return {
    runId,
    workDir: workDir === undefined ? undefined : resolve(workDir),
    agentHome: agentHome === undefined ? undefined : resolve(agentHome),
    last: Boolean(flags.last),
  };
}
