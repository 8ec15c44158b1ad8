// A real Slurm cluster for tests: munged, slurmctld and one slurmd per node, each on its own simulated machine, configured in a temp dir.
import { execa } from "execa";
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { removeDir, tempDir } from "../e2e/harness.js";
import { bootMachine, freePorts, type Machine, tail } from "./machine.js";
import { requireBinary } from "./system-packages.js";

export interface SlurmOptions {
  /** How many compute nodes, named nodeA, nodeB, …; 2 by default. */
  nodes?: number;
  /** CPUs each node offers (whatever the hardware has); 2 by default, so two nodes run four tasks at once. */
  cpusPerNode?: number;
  /** Seconds without an answer before slurmctld declares a node DOWN; 10 by default (Slurm's is 300). */
  slurmdTimeoutSeconds?: number;
  /**
   * How long a requeued job waits before it may start again (Slurm: cred_expire + 1 s; 120 s by default there). It is also
   * how long a job step credential is valid, so it cannot be tiny on a busy machine. 10 by default.
   */
  requeueDelaySeconds?: number;
  /** Extra slurm.conf lines, appended before the node and partition lines. */
  extraConfig?: string;
}

export interface SlurmResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** One job, or one task of an array, as `scontrol show job -o` reports it. */
export interface SlurmJob {
  jobId: string;
  arrayJobId?: string;
  arrayTaskId?: string;
  /** PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, NODE_FAIL, REQUEUED, … */
  state: string;
  reason: string;
  restarts: number;
  nodeList: string;
  exitCode: string;
  /** Every field, as printed. */
  fields: Record<string, string>;
}

export interface SlurmNode {
  /** The Slurm node name, also the hostname its jobs see. */
  name: string;
  port: number;
  /** The node's machine: its slurmd, every slurmstepd and every job process on it. */
  machine(): Machine;
  /** The node dies: slurmd and every job step on it are SIGKILLed at once; slurmctld notices only by its timeout. */
  kill(): Promise<void>;
  /** The node boots again with a fresh slurmd (new boot_id); with ReturnToService=2 slurmctld takes it back. */
  boot(): Promise<void>;
}

export interface SlurmCluster {
  dir: string;
  confPath: string;
  /** Environment for Slurm commands: SLURM_CONF; inherited SLURM_* variables must not leak in (run() drops them). */
  env: Record<string, string>;
  nodes: SlurmNode[];
  /** Where slurmctld and each slurmd log (slurmctld.log, slurmd-<node>.log). */
  logDir: string;
  /** Runs a Slurm client command (sbatch, squeue, scancel, scontrol, sinfo…) against this cluster. */
  run(command: string, args: string[], options?: { timeoutMs?: number }): Promise<SlurmResult>;
  /** `sbatch --parsable` with these arguments and, when given, this script on stdin; returns the job id. */
  sbatch(args: string[], script?: string): Promise<string>;
  /** The job, or every task of an array job, that slurmctld still knows (finished ones for MinJobAge, 300 s). */
  jobs(jobId: string): Promise<SlurmJob[]>;
  /** Polls jobs(jobId) until check holds; throws with the last states and slurmctld's log when the deadline passes. */
  waitForJobs(jobId: string, check: (jobs: SlurmJob[]) => boolean, timeoutMs?: number, what?: string): Promise<SlurmJob[]>;
  /** Node name → state as sinfo reports it (idle, mixed, allocated, down*, …). */
  nodeStates(): Promise<Record<string, string>>;
  waitForNodeState(node: string, state: RegExp, timeoutMs?: number): Promise<void>;
  /** Every machine this cluster booted (munge, slurmctl, each node, and each node's earlier lives), up or down. */
  machines(): Machine[];
  /** Stops every daemon and job (SIGKILL to each machine), then removes the temp dir. */
  close(): Promise<void>;
}

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const TERMINAL = new Set(["COMPLETED", "CANCELLED", "FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"]);

/** A job (or array task) that will not run again unless someone requeues it. */
export const isFinished = (job: SlurmJob): boolean => TERMINAL.has(job.state);

export async function startSlurm(options: SlurmOptions = {}): Promise<SlurmCluster> {
  const binaries = { munged: requireBinary("munged"), slurmctld: requireBinary("slurmctld"), slurmd: requireBinary("slurmd") };
  for (const client of ["sbatch", "squeue", "scontrol", "scancel", "sinfo"]) requireBinary(client);
  const dir = tempDir("delta-slurm-");
  // munged insists every directory above its socket is searchable by all.
  chmodSync(dir, 0o755);
  const paths = { munge: join(dir, "munge"), state: join(dir, "state"), spool: join(dir, "spool"), log: join(dir, "log"), run: join(dir, "run"), machines: join(dir, "machines") };
  for (const path of Object.values(paths)) mkdirSync(path, { recursive: true, mode: 0o755 });
  const socket = join(paths.munge, "munge.socket");
  const key = join(paths.munge, "munge.key");
  writeFileSync(key, randomBytes(1024), { mode: 0o600 });

  const names = Array.from({ length: options.nodes ?? 2 }, (_, i) => `node${LETTERS[i]}`);
  const [controllerPort, ...nodePorts] = await freePorts(names.length + 1);
  const confPath = join(dir, "slurm.conf");
  writeFileSync(confPath, slurmConf({ dir, paths, socket, controllerPort: controllerPort!, names, nodePorts, options }));
  const env = { SLURM_CONF: confPath };

  const machines = new Map<string, Machine>();
  const booted: Machine[] = [];
  const boot = async (name: string, command: string[]): Promise<Machine> => {
    const machine = await bootMachine({ hostname: name, dir: join(paths.machines, `${name}.${booted.length}`), command, env });
    machines.set(name, machine);
    booted.push(machine);
    return machine;
  };
  const close = async (): Promise<void> => {
    await Promise.all(booted.map((machine) => machine.kill().catch(() => undefined)));
    removeDir(dir);
  };
  const run = async (command: string, args: string[], runOptions: { timeoutMs?: number; input?: string } = {}): Promise<SlurmResult> => {
    const result = await execa(command, args, {
      env: { ...withoutSlurmVariables(process.env), ...env },
      extendEnv: false,
      reject: false,
      input: runOptions.input,
      stdin: runOptions.input === undefined ? "ignore" : undefined,
      timeout: runOptions.timeoutMs ?? 30_000,
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  };
  const nodeStates = async (): Promise<Record<string, string>> => {
    const result = await run("sinfo", ["-h", "-N", "-o", "%N %T"]);
    return Object.fromEntries(result.stdout.split("\n").filter(Boolean).map((line) => line.trim().split(/\s+/) as [string, string]));
  };
  const waitUntil = async <T>(probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (check(value)) return value;
      if (Date.now() > deadline) {
        throw new Error(`${what} not met within ${timeoutMs} ms; last seen: ${JSON.stringify(value)}\nslurmctld.log:\n${tail(join(paths.log, "slurmctld.log"), 20)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  try {
    const munged = await boot("munge", [binaries.munged, "-F", `--socket=${socket}`, `--key-file=${key}`, `--pid-file=${join(paths.munge, "munged.pid")}`, `--seed-file=${join(paths.munge, "munged.seed")}`, "--num-threads=2"]);
    await waitUntil(async () => !munged.isUp() || isSocket(socket), Boolean, 10_000, "munged's socket");
    if (!munged.isUp()) throw new Error(`munged exited:\n${tail(munged.consoleLog)}`);

    const controller = await boot("slurmctl", [binaries.slurmctld, "-D", "-f", confPath]);
    await waitUntil(() => run("scontrol", ["ping"], { timeoutMs: 10_000 }), (result) => /is UP/.test(result.stdout) || !controller.isUp(), 20_000, "slurmctld answering scontrol ping");
    if (!controller.isUp()) throw new Error(`slurmctld exited:\n${tail(controller.consoleLog)}`);

    // Each slurmd finds its node by -N and by hostname; its spool (%n) keeps the nodes' step sockets apart.
    const bootNode = async (name: string): Promise<void> => {
      mkdirSync(join(paths.spool, name), { recursive: true });
      await boot(name, [binaries.slurmd, "-D", "-N", name, "-f", confPath]);
    };
    const nodes: SlurmNode[] = names.map((name, index) => ({
      name,
      port: nodePorts[index]!,
      machine: () => machines.get(name)!,
      kill: () => machines.get(name)!.kill(),
      boot: async () => {
        if (machines.get(name)?.isUp()) throw new Error(`${name} is still up; kill() it first`);
        await bootNode(name);
      },
    }));
    for (const name of names) await bootNode(name);
    await waitUntil(nodeStates, (states) => names.every((name) => states[name] === "idle"), 30_000, `nodes ${names.join(", ")} idle`);

    const jobs = async (jobId: string): Promise<SlurmJob[]> => {
      const result = await run("scontrol", ["show", "job", "-o", jobId]);
      if (result.exitCode !== 0) return [];
      return result.stdout.split("\n").filter((line) => line.includes("JobId=")).map(parseJob);
    };
    return {
      dir,
      confPath,
      env,
      nodes,
      logDir: paths.log,
      run,
      sbatch: async (args, script) => {
        const result = await run("sbatch", ["--parsable", ...args], { input: script });
        if (result.exitCode !== 0) throw new Error(`sbatch ${args.join(" ")} failed (exit ${result.exitCode}): ${result.stderr.trim()}`);
        return result.stdout.trim().split(";")[0]!;
      },
      jobs,
      waitForJobs: (jobId, check, timeoutMs = 30_000, what = `job ${jobId}`) =>
        waitUntil(() => jobs(jobId), (found) => found.length > 0 && check(found), timeoutMs, what),
      nodeStates,
      machines: () => [...booted],
      waitForNodeState: async (node, state, timeoutMs = 30_000) => {
        await waitUntil(nodeStates, (states) => state.test(states[node] ?? ""), timeoutMs, `node ${node} in state ${state}`);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

interface ConfInput {
  dir: string;
  paths: Record<"munge" | "state" | "spool" | "log" | "run", string>;
  socket: string;
  controllerPort: number;
  names: string[];
  nodePorts: number[];
  options: SlurmOptions;
}

/** Everything in the temp dir; no accounting, no cgroups (linuxproc tracks job processes by parentage); root runs it all. */
function slurmConf({ dir, paths, socket, controllerPort, names, nodePorts, options }: ConfInput): string {
  const cpus = options.cpusPerNode ?? 2;
  return `# Written by test/support/slurm.ts for one test run in ${dir}.
ClusterName=delta${randomBytes(3).toString("hex")}
SlurmctldHost=slurmctl(127.0.0.1)
SlurmctldPort=${controllerPort}
SlurmdPort=${nodePorts[0]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${socket},cred_expire=${options.requeueDelaySeconds ?? 10}
StateSaveLocation=${paths.state}
SlurmdSpoolDir=${paths.spool}/%n
SlurmctldPidFile=${paths.run}/slurmctld.pid
SlurmdPidFile=${paths.run}/slurmd-%n.pid
SlurmctldLogFile=${paths.log}/slurmctld.log
SlurmdLogFile=${paths.log}/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=${options.slurmdTimeoutSeconds ?? 10}
SlurmctldTimeout=10
MessageTimeout=5
InactiveLimit=0
KillWait=2
MinJobAge=300
${options.extraConfig ?? ""}
${names.map((name, i) => `NodeName=${name} NodeHostname=${name} NodeAddr=127.0.0.1 Port=${nodePorts[i]} CPUs=${cpus} State=UNKNOWN`).join("\n")}
PartitionName=main Nodes=${names.join(",")} Default=YES MaxTime=INFINITE State=UP
`;
}

function parseJob(line: string): SlurmJob {
  const fields: Record<string, string> = {};
  for (const match of line.matchAll(/(?:^|\s)([A-Za-z][\w:/]*)=(\S*)/g)) fields[match[1]!] = match[2]!;
  return {
    jobId: fields.JobId ?? "",
    arrayJobId: fields.ArrayJobId,
    arrayTaskId: fields.ArrayTaskId,
    state: fields.JobState ?? "",
    reason: fields.Reason ?? "",
    restarts: Number(fields.Restarts ?? 0),
    nodeList: fields.NodeList ?? "",
    exitCode: fields.ExitCode ?? "",
    fields,
  };
}

/** A Slurm command run from inside a Slurm job would otherwise talk about that job, not this cluster. */
function withoutSlurmVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith("SLURM_")));
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}
