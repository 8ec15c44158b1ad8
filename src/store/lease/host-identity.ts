// Which machine, boot and PID namespace a process runs in: what tells hosts apart, where a hostname cannot (clones, containers).
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

export interface HostIdentity {
  /** /etc/machine-id: one per installed system (cloned images share it until it is re-initialised). */
  machine_id: string | null;
  /** The kernel's boot id: new at every boot, and shared by every container of one kernel. */
  boot_id: string | null;
  /** `pid:[inode]` of the PID namespace: tells apart containers of one kernel, whose pids mean different processes. */
  pid_namespace: string | null;
}

let cached: HostIdentity | undefined;

export function thisHost(): HostIdentity {
  cached ??= {
    machine_id: firstLine("/etc/machine-id") ?? firstLine("/var/lib/dbus/machine-id"),
    boot_id: firstLine("/proc/sys/kernel/random/boot_id"),
    pid_namespace: link("/proc/self/ns/pid"),
  };
  return cached;
}

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

function firstLine(path: string): string | null {
  try {
    const text = readFileSync(path, "utf8").trim();
    return /^[0-9a-fA-F-]{16,64}$/.test(text) ? text.toLowerCase() : null;
  } catch {
    return null;
  }
}

function link(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
