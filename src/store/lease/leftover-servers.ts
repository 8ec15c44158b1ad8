// Stops the MCP servers an engine that died left running: each recorded process group whose leader is still the recorded process.
import { existsSync } from "node:fs";
import { signalGroup } from "../../process/group.js";
import { isThisHost, type HostIdentity } from "./host-identity.js";
import { processStartedAt } from "../../process/proc-stat.js";
import type { ServerProcessRecord } from "../run-metadata.js";

/** /proc's start times count in clock ticks: two reads of one process agree within this. */
const SAME_PROCESS_SLACK_MS = 1_000;

/**
 * SIGKILL to every recorded group still led by the process that was recorded (same pid, same start
 * time), or whose leader is gone while members remain (a group id is not reused while the group
 * lives). A pid now held by another process is left alone, as is anything recorded on another host (machine, boot or PID namespace).
 * Returns what was stopped, for the janitor's note.
 */
export function stopLeftoverServers(recorded: readonly ServerProcessRecord[], recordedHost: Partial<HostIdentity> & { hostname: string }): string[] {
  // Another machine, boot or PID namespace (a clone may share the hostname) has other processes under these pids.
  // Without /proc a recorded pid cannot be told from a new process that reused it: the servers' own exit on EOF must do.
  if (!isThisHost(recordedHost) || !existsSync("/proc/self/stat")) return [];
  const stopped: string[] = [];
  for (const entry of recorded) {
    const started = processStartedAt(entry.pid);
    const sameLeader = started !== null && Math.abs(started - entry.start_time_unix) <= SAME_PROCESS_SLACK_MS;
    if (sameLeader || (started === null && groupExists(entry.pid))) {
      signalGroup(entry.pid, "SIGKILL");
      stopped.push(`MCP server '${entry.server}' (process group ${entry.pid})`);
    }
  }
  return stopped;
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
