// Finds the system programs that host tests need, and fails with the Debian package to install when one is missing.
import { accessSync, constants } from "node:fs";
import { join } from "node:path";

/** The Debian package that provides each program, so a failure says what to install. */
const PACKAGES: Record<string, string> = {
  sshd: "openssh-server",
  ssh: "openssh-client",
  "ssh-keygen": "openssh-client",
  parallel: "parallel",
  slurmctld: "slurmctld (slurm-wlm)",
  slurmd: "slurmd (slurm-wlm)",
  sbatch: "slurm-client (slurm-wlm)",
  squeue: "slurm-client (slurm-wlm)",
  scontrol: "slurm-client (slurm-wlm)",
  scancel: "slurm-client (slurm-wlm)",
  munged: "munge",
  faketime: "faketime",
  sshfs: "sshfs",
  unshare: "util-linux",
  setpriv: "util-linux",
  perl: "perl-base",
  jq: "jq",
  bwrap: "bubblewrap",
  curl: "curl",
  chromium: "chromium",
  script: "bsdutils",
};

/** Daemons live in sbin, which a non-root PATH often lacks. */
const SEARCH_PATH = [...(process.env.PATH ?? "").split(":").filter(Boolean), "/usr/local/sbin", "/usr/sbin", "/sbin"];

/** The absolute path of `name` on PATH or in an sbin directory, or null. */
export function findBinary(name: string): string | null {
  for (const dir of SEARCH_PATH) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** The message that names missing programs and the packages that bring them. */
export function missingProgramsMessage(names: string[]): string {
  const packages = [...new Set(names.map((name) => (PACKAGES[name] ?? name).split(" ")[0]))];
  return `host tests need ${names.join(", ")} (Debian: apt-get install ${packages.join(" ")}; .ci/run installs them): not found on PATH or in /usr/sbin, /sbin`;
}

/** Like findBinary, but throws the message naming the package when the program is missing: a host test fails, never skips. */
export function requireBinary(name: string): string {
  const path = findBinary(name);
  if (!path) throw new Error(missingProgramsMessage([name]));
  return path;
}
