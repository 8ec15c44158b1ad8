// Telling hosts apart by machine, boot and PID namespace (process/host-probe.ts reads them), where a hostname cannot (clones, containers).
import { hostname } from "node:os";
import { thisHost, type HostIdentity } from "../../process/host-probe.js";

/**
 * True when a process recorded with `other` runs beside this one: same machine, same boot, same PID namespace, so its
 * pid can be checked here. Where this system has neither a machine id nor a boot id (not Linux), the hostname has to do.
 */
export function isThisHost(other: Partial<HostIdentity> & { hostname: string }): boolean {
  const here = thisHost();
  if (here.machine_id === null && here.boot_id === null) return other.machine_id == null && other.boot_id == null && other.hostname === hostname();
  return other.machine_id === here.machine_id && other.boot_id === here.boot_id && (other.pid_namespace ?? null) === here.pid_namespace;
}

/** A short name for a host in messages: its hostname and the start of its machine and boot ids. */
export function describeHost(other: Partial<HostIdentity> & { hostname: string }): string {
  const ids = [other.machine_id && `machine ${other.machine_id.slice(0, 8)}`, other.boot_id && `boot ${other.boot_id.slice(0, 8)}`].filter(Boolean);
  return ids.length === 0 ? `host '${other.hostname}'` : `host '${other.hostname}' (${ids.join(", ")})`;
}
