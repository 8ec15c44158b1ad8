// The multi-host test infrastructure works: simulated sshd hosts, GNU parallel over them, a real Slurm cluster, and nothing left behind.
import { execa } from "execa";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startHosts, type Hosts } from "../support/hosts.js";
import { pidsIn } from "../support/machine.js";
import { multihostUnsupportedReason } from "../support/multihost-preflight.js";
import { diesSoon } from "../support/processes.js";
import { isFinished, type SlurmCluster, type SlurmJob, startSlurm } from "../support/slurm.js";
import { removeDir, tempDir, waitFor } from "../e2e/harness.js";

/** Everything this file starts, so the last test can check that closing left no daemon, process or directory. */
const started: Array<{ dirs: string[]; namespaces: () => string[]; close: () => Promise<void> }> = [];
let shared: string;

async function hostsFor(options: Parameters<typeof startHosts>[0]): Promise<Hosts> {
  const hosts = await startHosts(options);
  started.push({ dirs: [hosts.dir], namespaces: () => hosts.hosts.map((host) => host.pidNamespace), close: hosts.close });
  return hosts;
}

async function slurmFor(options: Parameters<typeof startSlurm>[0] = {}): Promise<SlurmCluster> {
  const cluster = await startSlurm(options);
  started.push({ dirs: [cluster.dir], namespaces: () => cluster.machines().map((machine) => machine.pidNamespace), close: cluster.close });
  return cluster;
}

/** The command line of a test-side pid, or "" once it is gone. */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

// Where the preflight finds something missing (a package, namespaces, FUSE), every test fails with its reason; none is skipped.
let unsupported: string | null = null;
beforeAll(async () => {
  unsupported = await multihostUnsupportedReason();
  shared = tempDir("delta-multihost-shared-");
});
beforeEach(() => {
  if (unsupported) throw new Error(unsupported);
});
afterAll(async () => {
  await Promise.all(started.map((entry) => entry.close()));
  if (shared) removeDir(shared);
});

describe("simulated hosts", () => {
  let pair: Hosts;
  beforeAll(async () => {
    if (!unsupported) pair = await hostsFor({ count: 2 });
  });

  it("are two machines to whoever logs in: own hostname, PID namespace, machine-id and boot_id, and the same files", async () => {
    const [a, b] = pair.hosts;
    const report = async (host: typeof a) => {
      const result = await host!.exec(
        `hostname; cat /etc/machine-id /proc/sys/kernel/random/boot_id; readlink /proc/self/ns/pid; ps -e -o comm= | sort -u | tr '\\n' ' '; echo; echo "written by $(hostname)" > ${shared}/from-$(hostname)`,
      );
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
      const [hostname, machineId, bootId, pidNs, commands] = result.stdout.split("\n");
      return { hostname, machineId, bootId, pidNs, commands: commands!.trim().split(" ") };
    };
    const ra = await report(a);
    const rb = await report(b);

    expect([ra.hostname, rb.hostname]).toEqual(["hostA", "hostB"]);
    expect([ra.machineId, rb.machineId]).toEqual([a!.machineId, b!.machineId]);
    expect(ra.machineId).not.toBe(rb.machineId);
    expect([ra.machineId, rb.machineId]).not.toContain(readFileSync("/etc/machine-id", "utf8").trim());
    expect(a!.ownBootId && b!.ownBootId).toBe(true);
    expect([ra.bootId, rb.bootId]).toEqual([a!.bootId, b!.bootId]);
    expect([ra.bootId, rb.bootId]).not.toContain(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
    // Each host sees only its own processes (its init, sshd, the session), never this test's node.
    expect(new Set([ra.pidNs, rb.pidNs, readlinkSync("/proc/self/ns/pid")]).size).toBe(3);
    for (const commands of [ra.commands, rb.commands]) {
      expect(commands).toContain("sshd");
      expect(commands).not.toContain("node");
    }
    // One file system: each host reads what the other wrote, and so does the test.
    expect((await b!.exec(`cat ${shared}/from-hostA`)).stdout).toBe("written by hostA");
    expect(readFileSync(join(shared, "from-hostB"), "utf8")).toBe("written by hostB\n");
  });

  it("run GNU parallel --sshlogin jobs: 10 jobs, spread over both hosts", async () => {
    const out = join(shared, "parallel");
    mkdirSync(out);
    const jobs = Array.from({ length: 10 }, (_, i) => String(i));
    const result = await execa("parallel", ["--ssh", pair.sshCommand, "--sshlogin", pair.sshlogin(2), `echo {} $(hostname) > ${out}/job-{}`, ":::", ...jobs], {
      env: pair.parallelEnv,
      reject: false,
      timeout: 50_000,
    });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const written = readdirSync(out).sort().map((file) => readFileSync(join(out, file), "utf8").trim());
    expect(written.map((line) => line.split(" ")[0]).sort()).toEqual(jobs.sort());
    // $(hostname) ran on the remote side; parallel fills every slot at start, so both hosts get jobs.
    expect(new Set(written.map((line) => line.split(" ")[1]))).toEqual(new Set(["hostA", "hostB"]));
  });

  it("kill() is a power failure: every process of the host dies at once, a connected ssh session drops, the other host is untouched", async () => {
    const { hosts: [victim, bystander] } = await hostsFor({ count: 2, prefix: "doomed" });
    const session = victim!.spawn("echo connected; exec sleep 300", { timeoutMs: 50_000 });
    const detached = await victim!.exec("setsid nohup sleep 301 >/dev/null 2>&1 < /dev/null & echo $!");
    expect(detached.exitCode).toBe(0);
    let sleeps: number[] = [];
    await waitFor(() => {
      sleeps = victim!.processes().filter((pid) => /^sleep 30[01]$/.test(cmdline(pid)));
      return sleeps.length === 2;
    }, 10_000, "both sleeps running on the host");
    expect(victim!.processes().length).toBeGreaterThanOrEqual(5); // init, sshd, its session, the two sleeps

    await victim!.kill();
    expect(victim!.isUp()).toBe(false);
    expect(victim!.processes()).toEqual([]);
    for (const pid of sleeps) expect(await diesSoon(pid)).toBe(true);
    const cut = await session;
    expect(cut.stdout).toBe("connected");
    expect(cut.exitCode).toBe(255); // ssh: connection lost
    expect((await victim!.exec("true", { timeoutMs: 15_000 })).exitCode).toBe(255);
    expect((await bystander!.exec("hostname")).stdout).toBe("doomedB");
  });

  it("stop() is an orderly shutdown: every process gets SIGTERM before the power goes off", async () => {
    const { hosts: [host] } = await hostsFor({ count: 1, prefix: "halting", stopGraceSeconds: 10 });
    const flag = join(shared, "halting");
    const started = await host!.exec(
      `setsid nohup sh -c 'trap "echo got TERM > ${flag}.term; exit 0" TERM; echo up > ${flag}.up; while :; do sleep 0.1; done' >/dev/null 2>&1 < /dev/null &`,
    );
    expect(started.exitCode).toBe(0);
    await waitFor(() => existsSync(`${flag}.up`), 10_000, "the trapping process running");
    await host!.stop();
    expect(readFileSync(`${flag}.term`, "utf8")).toBe("got TERM\n");
    expect(host!.processes()).toEqual([]);
  });

  it("can mount another host's directory with sshfs, seen through it by that host alone", async () => {
    const [a, b] = pair.hosts;
    const source = join(shared, "exported");
    const mountPoint = join(shared, "mounted-on-B");
    mkdirSync(source);
    mkdirSync(mountPoint);
    writeFileSync(join(source, "hello"), "from the source\n");
    await b!.mount(a!, source, mountPoint);
    const seen = await b!.exec(`cat ${mountPoint}/hello && echo written through sshfs > ${mountPoint}/reply && grep -c " ${mountPoint} fuse.sshfs " /proc/mounts`);
    expect(seen).toMatchObject({ exitCode: 0, stdout: "from the source\n1" });
    expect(readFileSync(join(source, "reply"), "utf8")).toBe("written through sshfs\n");
    expect(readdirSync(mountPoint)).toEqual([]); // not mounted here, nor on hostA
    expect((await a!.exec(`ls -A ${mountPoint}`)).stdout).toBe("");
  });

  it("can be clones: the same hostname and machine-id, told apart only by boot_id, pids that collide, and a clock that is off; each with its own /dev/shm", async () => {
    const { hosts: [a, b] } = await hostsFor({ count: 2, prefix: "clone", sameHostname: true, sameMachineId: true, clockOffsetSeconds: [0, 3600] });
    const facts = async (host: typeof a) => (await host!.exec("hostname; cat /etc/machine-id /proc/sys/kernel/random/boot_id; date +%s; sh -c 'echo $$'")).stdout.split("\n");
    const before = Math.floor(Date.now() / 1000);
    const [fa, fb] = [await facts(a), await facts(b)];
    const after = Math.ceil(Date.now() / 1000);
    expect(fa[0]).toBe("cloneA");
    expect(fb[0]).toBe("cloneA");
    expect(fa[1]).toBe(fb[1]);
    expect(fa[2]).not.toBe(fb[2]);
    expect(Number(fa[3])).toBeGreaterThanOrEqual(before);
    expect(Number(fa[3])).toBeLessThanOrEqual(after);
    expect(Number(fb[3])).toBeGreaterThanOrEqual(before + 3600);
    expect(Number(fb[3])).toBeLessThanOrEqual(after + 3600);
    // Fresh PID namespaces hand out the same numbers in the same order: the same history gives the same pid on both.
    expect(fa[4]).toBe(fb[4]);
    expect(a!.pidNamespace).not.toBe(b!.pidNamespace);
    // Each has its own /dev/shm, where libfaketime keeps a semaphore and a shared-memory object for each process of the
    // skewed host: none of it reaches this machine's, so a host killed with its sessions leaves nothing there.
    const probe = `delta-shm-probe-${process.pid}-${Date.now()}`;
    const shm = (await b!.exec(`touch /dev/shm/${probe} && ls -A /dev/shm`)).stdout.split("\n");
    expect(shm).toContain(probe);
    expect(shm.some((name) => name.startsWith("faketime_shm_"))).toBe(true);
    expect(existsSync(join("/dev/shm", probe))).toBe(false);
    expect((await a!.exec(`ls -A /dev/shm`)).stdout.split("\n")).not.toContain(probe);
  });
});

describe("a Slurm cluster of two nodes", () => {
  let cluster: SlurmCluster;
  beforeAll(async () => {
    if (!unsupported) cluster = await slurmFor();
  });

  const task = (jobs: SlurmJob[], id: string): SlurmJob | undefined => jobs.find((job) => job.arrayTaskId === id);

  it("runs an array of 4 tasks to completion, each on the node its hostname names", async () => {
    const out = join(shared, "array");
    mkdirSync(out);
    const id = await cluster.sbatch(["--array=0-3", "-o", `${out}/slurm-%A_%a.out`], `#!/bin/sh\nhostname > ${out}/task-$SLURM_ARRAY_TASK_ID\n`);
    const jobs = await cluster.waitForJobs(id, (found) => found.length === 4 && found.every(isFinished), 30_000, "4 array tasks finished");
    expect(jobs.map((job) => job.state)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
    expect(readdirSync(out).filter((file) => file.startsWith("task-")).sort()).toEqual(["task-0", "task-1", "task-2", "task-3"]);
    for (const job of jobs) expect(readFileSync(join(out, `task-${job.arrayTaskId}`), "utf8").trim()).toBe(job.nodeList);
    for (const job of jobs) expect(["nodeA", "nodeB"]).toContain(job.nodeList);
  });

  it("scancel ends one running task for good; scontrol requeue runs another again from the start", { timeout: 60_000 }, async () => {
    const out = join(shared, "cancel-requeue");
    mkdirSync(out);
    // Each task logs every start, then waits for the release file, then logs that it finished.
    const script = `#!/bin/sh
echo "restart \${SLURM_RESTART_COUNT:-0} on $(hostname)" >> ${out}/task-$SLURM_ARRAY_TASK_ID.started
while [ ! -e ${out}/release ]; do sleep 0.1; done
echo done >> ${out}/task-$SLURM_ARRAY_TASK_ID.done
`;
    const id = await cluster.sbatch(["--array=0-3", "-o", `${out}/slurm-%A_%a.out`], script);
    await waitFor(() => [0, 1, 2, 3].every((n) => existsSync(join(out, `task-${n}.started`))), 30_000, "all 4 tasks started");

    expect((await cluster.run("scancel", [`${id}_1`])).exitCode).toBe(0);
    expect((await cluster.run("scontrol", ["requeue", `${id}_2`])).exitCode).toBe(0);
    const requeued = await cluster.waitForJobs(id, (jobs) => task(jobs, "1")?.state === "CANCELLED" && task(jobs, "2")?.restarts === 1 && task(jobs, "2")?.state === "PENDING", 30_000, "task 1 cancelled, task 2 pending again");
    expect(task(requeued, "2")!.reason).toBe("BeginTime"); // Slurm holds a requeued job back for cred_expire + 1 s
    await waitFor(() => readFileSync(join(out, "task-2.started"), "utf8").includes("restart 1"), 45_000, "task 2 started a second time");

    writeFileSync(join(out, "release"), "");
    const jobs = await cluster.waitForJobs(id, (found) => found.length === 4 && found.every(isFinished), 30_000, "every task finished");
    expect(Object.fromEntries(jobs.map((job) => [job.arrayTaskId, job.state]))).toEqual({ 0: "COMPLETED", 1: "CANCELLED", 2: "COMPLETED", 3: "COMPLETED" });
    expect(task(jobs, "2")!.restarts).toBe(1);
    expect(readFileSync(join(out, "task-2.started"), "utf8")).toMatch(/^restart 0 on node[AB]\nrestart 1 on node[AB]\n$/);
    expect(readFileSync(join(out, "task-2.done"), "utf8")).toBe("done\n");
    expect(existsSync(join(out, "task-1.done"))).toBe(false);
    expect(readFileSync(join(out, `slurm-${id}_1.out`), "utf8")).toContain("CANCELLED");
  });

  it("loses a node like a machine: its job steps die with it, slurmctld marks it down and requeues the job on the other node", { timeout: 60_000 }, async () => {
    const fast = await slurmFor({ slurmdTimeoutSeconds: 5, requeueDelaySeconds: 5 });
    const out = join(shared, "node-death");
    mkdirSync(out);
    const script = `#!/bin/sh
echo "$(hostname)" >> ${out}/started
while [ ! -e ${out}/release ]; do sleep 0.1; done
echo "$(hostname)" > ${out}/done
`;
    const id = await fast.sbatch(["-o", `${out}/slurm-%j.out`], script);
    await waitFor(() => existsSync(join(out, "started")), 30_000, "the job started");
    const first = readFileSync(join(out, "started"), "utf8").trim();
    const dead = fast.nodes.find((node) => node.name === first)!;
    const survivor = fast.nodes.find((node) => node.name !== first)!;
    expect(dead.machine().processes().some((pid) => cmdline(pid).includes("slurm_script"))).toBe(true);

    await dead.kill();
    expect(dead.machine().processes()).toEqual([]);
    await fast.waitForNodeState(dead.name, /^down/, 30_000);
    await waitFor(() => readFileSync(join(out, "started"), "utf8").split("\n").filter(Boolean).length === 2, 40_000, "the job started again");
    expect(readFileSync(join(out, "started"), "utf8")).toBe(`${dead.name}\n${survivor.name}\n`);
    writeFileSync(join(out, "release"), "");
    const [job] = await fast.waitForJobs(id, (jobs) => jobs.every(isFinished), 30_000, "the requeued job finished");
    expect(job).toMatchObject({ state: "COMPLETED", restarts: 1, nodeList: survivor.name });

    await dead.boot();
    await fast.waitForNodeState(dead.name, /^idle$/, 30_000);
  });
});

describe("tear-down", () => {
  it("leaves no sshd, slurmd, slurmctld, munged or job process of ours, and no temp dir", async () => {
    expect(started.length).toBeGreaterThan(0);
    await Promise.all(started.map((entry) => entry.close()));
    for (const entry of started) {
      for (const ns of entry.namespaces()) expect(pidsIn(ns)).toEqual([]);
      for (const dir of entry.dirs) expect(existsSync(dir)).toBe(false);
    }
    const ours = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map((pid) => cmdline(Number(pid)))
      .filter((line) => /sshd|slurm|munged/.test(line) && started.some((entry) => entry.dirs.some((dir) => line.includes(dir))));
    expect(ours).toEqual([]);
  });
});
