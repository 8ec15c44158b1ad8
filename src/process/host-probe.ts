// What this process's host is, as Linux tells it: /etc/machine-id, the kernel's boot id and the PID namespace, read once.
import { readFileSync, readlinkSync } from "node:fs";

export interface HostIdentity {
  /** /etc/machine-id: one per installed system (cloned images share it until it is re-initialised). */
  machine_id: string | null;
  /** The kernel's boot id: new at every boot, and shared by every container of one kernel. */
  boot_id: string | null;
  /** `pid:[inode]` of the PID namespace: tells apart containers of one kernel, whose pids mean different processes. */
  pid_namespace: string | null;
}

let cached: HostIdentity | undefined;

/** This host's identity; each part null where the system cannot tell it (not Linux, no machine id). */
export function thisHost(): HostIdentity {
  cached ??= {
    machine_id: firstLine("/etc/machine-id") ?? firstLine("/var/lib/dbus/machine-id"),
    boot_id: firstLine("/proc/sys/kernel/random/boot_id"),
    pid_namespace: link("/proc/self/ns/pid"),
  };
  return cached;
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
