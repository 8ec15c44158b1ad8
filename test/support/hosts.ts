// Simulated hosts for multi-host tests: an sshd per host on 127.0.0.1, each on its own simulated machine, all on the real file system.
import { execa, type ResultPromise } from "execa";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { quote } from "shell-quote";
import { removeDir, tempDir } from "../e2e/harness.js";
import { bootMachine, freePorts, type Machine, tail } from "./machine.js";
import { findLibfaketime, isRoot } from "./multihost-preflight.js";
import { requireBinary } from "./system-packages.js";

export interface HostsOptions {
  count: number;
  /** Every host reports the first host's hostname, as VMs cloned from one image do. */
  sameHostname?: boolean;
  /** Every host has the first host's /etc/machine-id, as clones that were never re-initialised do. */
  sameMachineId?: boolean;
  /** Host names are `<prefix>A`, `<prefix>B`, …; "host" by default. */
  prefix?: string;
  /**
   * Clock offset in seconds per host, by index (hostA first): every process started over ssh on that host runs with
   * libfaketime preloaded, so its clock reads that far off, as on a machine whose clock is wrong. sshd itself and
   * timestamps the kernel stamps on files (write, mkdir) keep the real time; touch and utime calls are shifted too.
   */
  clockOffsetSeconds?: number[];
  /** Seconds stop() gives processes between SIGTERM and the power going off; 5 by default. */
  stopGraceSeconds?: number;
}

export interface HostResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface Host {
  /** The ssh alias in the config file: `ssh -F <sshConfigPath> <name>`. Unique even when hostnames are not. */
  name: string;
  /** What `hostname` says on the host. */
  hostname: string;
  /** The host's /etc/machine-id (32 hex digits). */
  machineId: string;
  /** The host's /proc/sys/kernel/random/boot_id when ownBootId, else the host shows the real machine's. */
  bootId: string;
  ownBootId: boolean;
  /** The port its sshd listens on, on 127.0.0.1. */
  port: number;
  /** Arguments for `ssh` that reach this host: `["-F", sshConfigPath, name]`; append the remote command. */
  sshArgs: string[];
  /** Test-side pid of the host's pid 1; SIGKILL to it kills the whole host. */
  pidNamespaceInit: number;
  /** `pid:[inode]` of the host's PID namespace. */
  pidNamespace: string;
  /** sshd's log and the machine's own messages. */
  consoleLog: string;
  /** Runs a shell command on the host over ssh and waits for it. */
  exec(command: string, options?: { timeoutMs?: number; input?: string }): Promise<HostResult>;
  /** Starts a shell command on the host over ssh without waiting; killing the returned process only cuts the connection. */
  spawn(command: string, options?: { timeoutMs?: number }): ResultPromise<{ reject: false }>;
  /**
   * Mounts `remoteDir` of `source` at `mountPoint` with sshfs, in this host's mount namespace only: this host then sees
   * that directory through a network file system (no lock coherence with other hosts, its own caching), everyone else
   * sees the plain directory. The mount goes away with the host.
   */
  mount(source: Host, remoteDir: string, mountPoint: string): Promise<void>;
  /** Test-side pids of every process running on the host, sshd and pid 1 included. */
  processes(): number[];
  isUp(): boolean;
  /** The host dies at once, as in a power failure: every process on it is SIGKILLed; resolves when none is left. */
  kill(): Promise<void>;
  /** Orderly shutdown: every process gets SIGTERM, then the power goes off after the grace period. */
  stop(): Promise<void>;
}

export interface Hosts {
  hosts: Host[];
  /** The temp directory holding keys, configs and logs. */
  dir: string;
  /** ssh client config naming every host; nothing else (no ~/.ssh, no /etc/ssh/ssh_config) is read with it. */
  sshConfigPath: string;
  /** `ssh -F <config>`, for GNU parallel's `--ssh` or any tool that takes an ssh command. */
  sshCommand: string;
  /** Environment for GNU parallel: its own PARALLEL_HOME in the temp dir, so ~/.parallel is left alone. */
  parallelEnv: Record<string, string>;
  /** GNU parallel's `--sshlogin` value for every host still up: `<slots>/hostA,<slots>/hostB`. */
  sshlogin(slots?: number): string;
  /** Kills every host and removes the temp directory. */
  close(): Promise<void>;
}

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

export async function startHosts(options: HostsOptions): Promise<Hosts> {
  if (options.count < 1 || options.count > LETTERS.length) throw new Error(`startHosts: count must be 1..${LETTERS.length}`);
  const sshd = requireBinary("sshd");
  const ssh = requireBinary("ssh");
  const dir = tempDir("delta-hosts-");
  const prefix = options.prefix ?? "host";
  const names = Array.from({ length: options.count }, (_, i) => `${prefix}${LETTERS[i]}`);
  const sshConfigPath = join(dir, "ssh_config");
  const knownHosts = join(dir, "known_hosts");
  const clientKey = join(dir, "client_key");
  const user = userInfo().username;
  const hosts: Host[] = [];
  const machines: Machine[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(machines.map((machine) => machine.kill().catch(() => undefined)));
    removeDir(dir);
  };

  try {
    // A throwaway client key and one host key per host; the client config names each host by alias and trusts only its key.
    await keygen(clientKey, "delta-multihost-client");
    writeFileSync(join(dir, "authorized_keys"), readFileSync(`${clientKey}.pub`));
    for (const name of names) await keygen(join(dir, name, "host_key"), name);
    writeFileSync(knownHosts, names.map((name) => `${name} ${readFileSync(join(dir, name, "host_key.pub"), "utf8").trim()}\n`).join(""));
    // As root, sshd's privilege separation chroots into /run/sshd, which Debian's service creates at start.
    if (isRoot()) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });

    const machineId = options.sameMachineId ? randomMachineId() : undefined;
    for (const name of names) {
      const hostname = options.sameHostname ? names[0]! : name;
      const sessionEnv = clockEnv(options.clockOffsetSeconds?.[hosts.length]);
      const { machine, port } = await bootSshd(sshd, dir, name, hostname, machineId, sessionEnv, options.stopGraceSeconds);
      machines.push(machine);
      hosts.push(makeHost(ssh, sshConfigPath, name, port, machine));
    }
    writeFileSync(
      sshConfigPath,
      hosts.map((host) => `Host ${host.name}
  HostName 127.0.0.1
  Port ${host.port}
  User ${user}
  HostKeyAlias ${host.name}
  IdentityFile ${clientKey}
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile ${knownHosts}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  BatchMode yes
  ConnectTimeout 10
  ControlMaster no
  ControlPath none
  LogLevel ERROR
`).join(""),
    );
    // Each host answers over ssh as itself before anyone uses it.
    for (const host of hosts) {
      const probe = await host.exec("hostname");
      if (probe.exitCode !== 0 || probe.stdout.trim() !== host.hostname) {
        throw new Error(`ssh to ${host.name} failed (exit ${probe.exitCode}, said ${JSON.stringify(probe.stdout.trim())}): ${probe.stderr.trim()}\n${tail(host.consoleLog)}`);
      }
    }
  } catch (err) {
    await close();
    throw err;
  }

  return {
    hosts,
    dir,
    sshConfigPath,
    sshCommand: quote([ssh, "-F", sshConfigPath]),
    parallelEnv: { PARALLEL_HOME: join(dir, "parallel") },
    sshlogin: (slots = 1) => hosts.filter((host) => host.isUp()).map((host) => `${slots}/${host.name}`).join(","),
    close,
  };
}

function randomMachineId(): string {
  return randomBytes(16).toString("hex");
}

async function keygen(path: string, comment: string): Promise<void> {
  mkdirSync(join(path, ".."), { recursive: true });
  await execa(requireBinary("ssh-keygen"), ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path]);
}

/** sshd_config SetEnv values that give a host's sessions a skewed clock. */
function clockEnv(offsetSeconds: number | undefined): string[] {
  if (!offsetSeconds) return [];
  const library = findLibfaketime();
  if (!library) throw new Error("clockOffsetSeconds needs libfaketime (Debian: apt-get install faketime)");
  return [`LD_PRELOAD=${library}`, `FAKETIME=${offsetSeconds > 0 ? "+" : ""}${Math.round(offsetSeconds)}`];
}

async function bootSshd(sshd: string, dir: string, name: string, hostname: string, machineId: string | undefined, sessionEnv: string[], stopGraceSeconds?: number): Promise<{ machine: Machine; port: number }> {
  for (let attempt = 1; ; attempt += 1) {
    const port = (await freePorts(1))[0]!; // sshd may still lose it to another process; then this tries again
    const hostDir = join(dir, name);
    const config = join(hostDir, "sshd_config");
    // The host's sessions get a home of their own: the user's shell start-up files (a pyenv or conda init, say) are not
    // run, so they can neither slow a host nor hang it (a killed pyenv rehash leaves a lock every later shell waits on).
    const home = join(hostDir, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(
      config,
      `ListenAddress 127.0.0.1
Port ${port}
HostKey ${join(hostDir, "host_key")}
AuthorizedKeysFile ${join(dir, "authorized_keys")}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PidFile none
PrintMotd no
PrintLastLog no
MaxStartups 200
MaxSessions 200
Subsystem sftp internal-sftp
SetEnv ${[`PATH=${process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`, `HOME=${home}`, ...sessionEnv].join(" ")}
LogLevel INFO
`,
    );
    const machine = await bootMachine({ hostname, dir: hostDir, machineId, stopGraceSeconds, command: [sshd, "-D", "-e", "-f", config] });
    const listening = `Server listening on 127.0.0.1 port ${port}.`;
    const deadline = Date.now() + 15_000;
    while (machine.isUp() && !readFileSync(machine.consoleLog, "utf8").includes(listening) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (machine.isUp() && readFileSync(machine.consoleLog, "utf8").includes(listening)) return { machine, port };
    await machine.kill();
    const log = tail(machine.consoleLog);
    if (!(attempt < 5 && log.includes("Address already in use"))) throw new Error(`sshd of ${name} did not start listening on port ${port}:\n${log}`);
  }
}

function makeHost(ssh: string, sshConfigPath: string, name: string, port: number, machine: Machine): Host {
  const sshArgs = ["-F", sshConfigPath, name];
  const spawnOnHost = (command: string, options: { timeoutMs?: number; input?: string } = {}): ResultPromise<{ reject: false }> =>
    execa(ssh, [...sshArgs, command], {
      reject: false,
      input: options.input,
      stdin: options.input === undefined ? "ignore" : undefined,
      timeout: options.timeoutMs ?? 30_000,
    }) as ResultPromise<{ reject: false }>;
  return {
    name,
    hostname: machine.hostname,
    machineId: machine.machineId,
    bootId: machine.bootId,
    ownBootId: machine.ownBootId,
    port,
    sshArgs,
    pidNamespaceInit: machine.init,
    pidNamespace: machine.pidNamespace,
    consoleLog: machine.consoleLog,
    exec: async (command, options) => {
      const result = await spawnOnHost(command, options);
      return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
    },
    spawn: spawnOnHost,
    mount: async (source, remoteDir, mountPoint) => {
      const result = await spawnOnHost(quote([requireBinary("sshfs"), "-F", sshConfigPath, "-o", "reconnect", `${source.name}:${remoteDir}`, mountPoint]));
      if (result.exitCode !== 0) throw new Error(`sshfs ${source.name}:${remoteDir} on ${name} failed (exit ${result.exitCode}): ${String(result.stderr).trim()}`);
    },
    processes: machine.processes,
    isUp: machine.isUp,
    kill: machine.kill,
    stop: machine.stop,
  };
}
