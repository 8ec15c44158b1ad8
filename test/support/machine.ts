// A simulated machine: one command under its own pid 1, in new UTS, PID and mount namespaces, with its own hostname, machine-id and boot_id, on the real file system.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { isRoot } from "./multihost-preflight.js";
import { requireBinary } from "./system-packages.js";

export interface MachineOptions {
  /** What `hostname` says inside; two machines may share one, as cloned VMs do. */
  hostname: string;
  /** Where the machine's own files go (machine-id, boot_id, scripts, console log); created if missing. */
  dir: string;
  /** The program pid 1 supervises, absolute path first; when it exits, the machine shuts down. */
  command: string[];
  /** 32 lowercase hex digits; a fresh random one by default. */
  machineId?: string;
  /** Seconds between SIGTERM to every process and the power going off, on stop(). */
  stopGraceSeconds?: number;
  env?: Record<string, string>;
}

export interface Machine {
  hostname: string;
  machineId: string;
  bootId: string;
  /** False when the kernel refused to bind a file over /proc/sys/kernel/random/boot_id; the machine then shows the real one. */
  ownBootId: boolean;
  /** The machine's stdout and stderr: the setup messages and whatever its command logs there. */
  consoleLog: string;
  /** The pid, in this (the test's) PID namespace, of the machine's pid 1. */
  init: number;
  /** `pid:[inode]` of the machine's PID namespace, as /proc/<pid>/ns/pid reads. */
  pidNamespace: string;
  /** True until the machine's pid 1 is gone. */
  isUp(): boolean;
  /** Test-side pids of every process still running on the machine, pid 1 included. */
  processes(): number[];
  /** Power failure: SIGKILL to pid 1, so the kernel kills every process of the machine at once; resolves when all are gone. */
  kill(): Promise<void>;
  /** Orderly shutdown: SIGTERM to every process, then power off after the grace period; resolves when all are gone. */
  stop(): Promise<void>;
  /** Resolves when the machine is down, however it went down. */
  down: Promise<void>;
}

/**
 * pid 1 of a machine: starts the command, reaps every orphan (so a dead process never lingers as a zombie that looks alive),
 * and exits when the command exits, or on SIGTERM after sending SIGTERM to everything and waiting up to the grace period.
 * When pid 1 exits, the kernel kills every process left in the namespace.
 */
const INIT_PL = `use strict;
my $grace = shift @ARGV;
my $main = fork();
die "machine init: fork: $!\\n" unless defined $main;
if ($main == 0) { exec { $ARGV[0] } @ARGV or die "machine init: exec $ARGV[0]: $!\\n" }
my $stopping = 0;
$SIG{TERM} = sub { return if $stopping; $stopping = 1; kill 'TERM', -1; alarm $grace };
$SIG{ALRM} = sub { exit 0 };
while (1) {
  my $pid = waitpid(-1, 0);
  if ($pid == -1) { next if $!{EINTR}; exit 0 }
  if ($pid == $main && !$stopping) { print STDERR "machine init: $ARGV[0] exited with status $?; shutting down\\n"; exit 0 }
}
`;

/**
 * Runs as pid 1 before the init: names the machine and gives it its own identity files, by bind mounts that only its
 * mount namespace sees, and its own /dev/shm, as a machine has: what its processes leave there goes with it (libfaketime
 * makes a semaphore and a shared-memory object for each process it is preloaded in and removes them only at a clean
 * exit, so every session of a host with a skewed clock that was killed with the host left two files in the test's
 * /dev/shm). $1 hostname, $2 machine directory, then the init's command line.
 */
const SETUP_SH = `set -eu
hostname "$1"
dir=$2
shift 2
if [ ! -e /etc/machine-id ]; then echo "machine setup: /etc/machine-id does not exist, so it cannot be replaced per machine" >&2; exit 97; fi
mount --bind "$dir/machine-id" /etc/machine-id
mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m tmpfs /dev/shm
if mount --bind "$dir/boot_id" /proc/sys/kernel/random/boot_id 2>"$dir/boot_id.err"; then echo yes > "$dir/own-boot_id"; else echo no > "$dir/own-boot_id"; fi
exec "$@"
`;

const UNSHARE_FLAGS = ["--uts", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"];

export async function bootMachine(options: MachineOptions): Promise<Machine> {
  mkdirSync(options.dir, { recursive: true });
  const machineId = options.machineId ?? randomBytes(16).toString("hex");
  const bootId = randomUUID();
  writeFileSync(join(options.dir, "machine-id"), `${machineId}\n`);
  writeFileSync(join(options.dir, "boot_id"), `${bootId}\n`);
  writeFileSync(join(options.dir, "init.pl"), INIT_PL);
  writeFileSync(join(options.dir, "setup.sh"), SETUP_SH);
  rmSync(join(options.dir, "own-boot_id"), { force: true }); // written by this boot's setup, which the wait below needs to see
  const consoleLog = join(options.dir, "console.log");

  // Not root: a user namespace maps us to root for the set-up, and a nested one maps back to our own uid for what runs
  // on the machine, so its files belong to us and sshd runs unprivileged (no privilege separation to a user we lack).
  const root = isRoot();
  const userns = root ? [] : ["--map-root-user"];
  const dropToUser = root ? [] : [requireBinary("unshare"), `--map-user=${process.getuid?.()}`, `--map-group=${process.getgid?.()}`, "--"];
  const argv = [
    "--pdeathsig", "KILL", // if the test process dies, its machines go with it
    requireBinary("unshare"), ...userns, ...UNSHARE_FLAGS,
    "/bin/sh", join(options.dir, "setup.sh"), options.hostname, options.dir, ...dropToUser,
    requireBinary("perl"), join(options.dir, "init.pl"), String(options.stopGraceSeconds ?? 5), ...options.command,
  ];
  const log = openSync(consoleLog, "a");
  let child: ChildProcess;
  try {
    child = spawn(requireBinary("setpriv"), argv, { stdio: ["ignore", log, log], env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...options.env } });
  } finally {
    closeSync(log);
  }
  let up = true;
  const down = new Promise<void>((resolve) => {
    child.once("exit", () => {
      up = false;
      resolve();
    });
    child.once("error", () => {
      up = false;
      resolve();
    });
  });
  const unsharePid = child.pid;
  if (unsharePid === undefined) throw new Error(`could not start machine ${options.hostname}: ${requireBinary("setpriv")} did not spawn`);

  // pid 1 of the machine is unshare's only child; its namespace is known once it has one of its own.
  let init = 0;
  let pidNamespace = "";
  const deadline = Date.now() + 10_000;
  while (up && Date.now() < deadline) {
    init = childrenOf(unsharePid)[0] ?? 0;
    const ns = init ? nsOf(init) : null;
    if (ns && ns !== nsOf(process.pid) && existsSync(join(options.dir, "own-boot_id"))) {
      pidNamespace = ns;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (!pidNamespace) {
    child.kill("SIGKILL");
    await down;
    throw new Error(`machine ${options.hostname} did not come up: ${tail(consoleLog)}`);
  }

  const processes = (): number[] => pidsIn(pidNamespace);
  const allGone = async (what: string): Promise<void> => {
    await Promise.race([down, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    // A busy machine can take seconds to reap a killed namespace; gone is gone as soon as the last pid is.
    const end = Date.now() + 30_000;
    while (processes().length > 0) {
      if (Date.now() > end) throw new Error(`${what} of ${options.hostname} left processes ${processes().join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const signalInit = (signal: NodeJS.Signals): void => {
    try {
      if (up) process.kill(init, signal);
    } catch {
      // already gone
    }
  };
  return {
    hostname: options.hostname,
    machineId,
    bootId,
    ownBootId: readFileSync(join(options.dir, "own-boot_id"), "utf8").trim() === "yes",
    consoleLog,
    init,
    pidNamespace,
    isUp: () => up,
    processes,
    down,
    kill: async () => {
      signalInit("SIGKILL");
      await allGone("kill()");
    },
    stop: async () => {
      signalInit("SIGTERM");
      const graceMs = (options.stopGraceSeconds ?? 5) * 1000 + 5_000;
      await Promise.race([down, new Promise((resolve) => setTimeout(resolve, graceMs))]);
      signalInit("SIGKILL");
      await allGone("stop()");
    },
  };
}

/** The last lines of a log, for error messages. */
export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return `(no ${file})`;
  }
}

function nsOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

function childrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Live processes in a PID namespace; zombies (already dead, waiting for their parent) do not count. */
export function pidsIn(pidNamespace: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || nsOf(Number(entry)) !== pidNamespace) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.charAt(stat.lastIndexOf(")") + 2) !== "Z") found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Distinct free ports on 127.0.0.1 for daemons, all held at once so none is handed out twice; another process may still take one before the daemon binds. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () =>
      new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
        const server = createServer();
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => resolve(server));
      })),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
