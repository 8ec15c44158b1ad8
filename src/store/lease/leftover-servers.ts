// Ends the MCP servers a holder that died left running: each process group its owner record (or, for a record written
// before servers were noted there, metadata.json) names, by the one killer of leftover groups.
import { killLeftoverGroup } from "../../process/leftover-group.js";
import type { ServerProcessRecord } from "../run-metadata.js";
import { isThisHost } from "./host-identity.js";
import type { OwnerRecord, ServerGroup } from "./owner-record.js";

/** Where the servers' groups were recorded: the holder's own record, or metadata.json with the host it names. */
interface RecordedServers {
  owner: OwnerRecord | null;
  metadata: { hostname: string; machine_id?: string | null; boot_id?: string | null; pid_namespace?: string | null; mcp_server_processes?: ServerProcessRecord[] };
}

/**
 * SIGKILL to every recorded server group still led by the recorded process (or whose leader is gone while members that
 * started after it remain); a group id now used by another process is left alone, as is anything recorded on another
 * host (machine, boot or PID namespace). Returns what was stopped, for the janitor's note.
 */
export async function stopLeftoverServers(recorded: RecordedServers): Promise<string[]> {
  const { owner, metadata } = recorded;
  const fromRecord = owner?.server_groups;
  const host = fromRecord === undefined ? metadata : owner!;
  const groups: ServerGroup[] = fromRecord ?? (metadata.mcp_server_processes ?? []).map((entry) => ({ server: entry.server, pgid: entry.pid, started_at_unix: entry.start_time_unix }));
  // Another machine, boot or PID namespace (a clone may share the hostname) has other processes under these pids.
  if (groups.length === 0 || !isThisHost(host)) return [];
  const stopped: string[] = [];
  for (const group of groups) {
    const killed = await killLeftoverGroup({ pgid: group.pgid, startedAtUnix: group.started_at_unix });
    if (killed.length > 0) stopped.push(`MCP server '${group.server}' (process group ${group.pgid})`);
  }
  return stopped;
}
