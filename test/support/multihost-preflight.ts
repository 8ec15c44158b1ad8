// Whether this machine can run the multi-host tests (sshd hosts in namespaces, a Slurm cluster), and exactly why not.
import { execa } from "execa";
import { existsSync, readdirSync } from "node:fs";
import { findBinary, missingProgramsMessage } from "./system-packages.js";
import { join } from "node:path";

/** What a multi-host test needs; each piece checks only its own binaries and privileges. */
export type MultihostNeed = "hosts" | "parallel" | "slurm" | "faketime" | "sshfs";

const BINARIES: Record<MultihostNeed, string[]> = {
  hosts: ["sshd", "ssh", "ssh-keygen", "unshare", "setpriv", "perl"],
  parallel: ["parallel", "ssh"],
  slurm: ["slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "munged", "unshare", "setpriv", "perl"],
  faketime: ["faketime"],
  sshfs: ["sshfs", "ssh"],
};

/** libfaketime's preload library (Debian: libfaketime, which faketime depends on), or null. */
export function findLibfaketime(): string | null {
  const candidates = ["/usr/lib/faketime/libfaketime.so.1"];
  try {
    for (const entry of readdirSync("/usr/lib")) candidates.push(join("/usr/lib", entry, "faketime/libfaketime.so.1"));
  } catch {
    // no /usr/lib
  }
  return candidates.find((path) => existsSync(path)) ?? null;
}

export const isRoot = (): boolean => process.getuid?.() === 0;

let namespaceProbe: Promise<string | null> | undefined;

/** Why new UTS, PID and mount namespaces (with a user namespace when not root) cannot be made here, or null. */
function namespaceUnsupportedReason(): Promise<string | null> {
  namespaceProbe ??= (async () => {
    const userns = isRoot() ? [] : ["--map-root-user"];
    const probe = await execa("unshare", [...userns, "--uts", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c", "hostname probe && test \"$(hostname)\" = probe && test $$ = 1"], {
      reject: false,
      timeout: 15_000,
    }).catch((err: unknown) => ({ exitCode: -1, stderr: String(err) }));
    if (probe.exitCode === 0) return null;
    const how = isRoot() ? "as root" : "as a user, through a user namespace (is kernel.unprivileged_userns_clone or an AppArmor userns restriction in the way?)";
    return `simulated hosts need new UTS, PID and mount namespaces, and unshare could not make them ${how}: ${String(probe.stderr).trim() || `exit ${probe.exitCode}`}`;
  })();
  return namespaceProbe;
}

/**
 * Null when every need can be met, else one message naming what is missing and how to get it.
 * Multi-host tests call this in beforeAll and throw the message, so they fail where they cannot run rather than pass unseen.
 */
export async function multihostUnsupportedReason(needs: MultihostNeed[] = ["hosts", "parallel", "slurm", "faketime", "sshfs"]): Promise<string | null> {
  if (process.platform !== "linux") return `multi-host tests need Linux namespaces; this is ${process.platform}`;
  const missing = [...new Set(needs.flatMap((need) => BINARIES[need]))].filter((name) => !findBinary(name));
  if (missing.length > 0) return missingProgramsMessage(missing);
  if (needs.includes("faketime") && !findLibfaketime()) return "multi-host tests need libfaketime.so.1 (Debian: apt-get install faketime): not found under /usr/lib/*/faketime/";
  if (needs.includes("sshfs") && !existsSync("/dev/fuse")) return "sshfs mounts need FUSE, and there is no /dev/fuse (load the fuse module, or give the container the device)";
  if (needs.includes("slurm") && !isRoot()) return `the Slurm cluster runs slurmd as root (it launches jobs as the submitting user); this process runs as uid ${process.getuid?.()}`;
  if (needs.includes("hosts") || needs.includes("slurm")) return namespaceUnsupportedReason();
  return null;
}
