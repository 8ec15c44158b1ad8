// Items per second through three fan-out runners — xargs -P, GNU parallel over ssh to two hosts, a Slurm job array on two nodes — and what each adds to one item; every item is examples/slurm's task script (one 2-turn `delta run`) against the instant model server.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { quote } from "shell-quote";
import { checkRun } from "./check-run.mjs";
import { spawnTimed } from "./spawn-timed.mjs";

/**
 * Measures, per repetition: the task script run directly, one item after another (the per-item floor); each runner
 * with one slot (its per-item overhead: its time per item minus the floor); each runner with `slots` slots over
 * `items` items (items/s). Returns { rows: [{ name, values, unit }], lost, skipped: [reason…] }.
 */
export async function measureRunners({ repo, deltaBin, root, server, agent, plan }) {
  const task = join(repo, "examples/slurm/map-array.sbatch");
  const submit = join(repo, "examples/slurm/slurm-map.sh");
  // The task script finds `delta` through DELTA, and the launcher starts the `node` on PATH.
  const env = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, HOME: process.env.HOME ?? "/root", DELTA: deltaBin, DELTA_API_KEY: "sk-bench", DELTA_BASE_URL: server.baseUrl };
  const support = await loadMultihostSupport(repo);
  const skipped = [];
  const runners = [{ name: `xargs -P ${plan.slots}`, start: async () => xargsRunner(task, agent, env) }];
  const sshReason = await support.multihostUnsupportedReason(["hosts", "parallel"]);
  if (sshReason) skipped.push(`GNU parallel over ssh: ${sshReason}`);
  else runners.push({ name: `GNU parallel --sshlogin ${plan.slots / 2}/hostA,${plan.slots / 2}/hostB`, start: () => parallelRunner(support, task, agent, env) });
  const slurmReason = await support.multihostUnsupportedReason(["slurm"]);
  if (slurmReason) skipped.push(`Slurm: ${slurmReason}`);
  else runners.push({ name: `Slurm job array, 2 nodes × ${plan.slots / 2} CPUs`, start: () => slurmRunner(support, submit, agent, env, plan.slots / 2) });

  const started = [];
  let lost = 0;
  let batch = 0;
  const direct = [];
  const perRunner = runners.map(() => ({ overhead: [], rate: [] }));
  try {
    for (const runner of runners) started.push(await runner.start());
    const check = (dir, count) => {
      const problems = checkItems(dir, count);
      for (const problem of problems) console.error(`[bench] runners: ${problem}`);
      lost += problems.length;
    };
    for (let rep = 0; rep < plan.reps; rep += 1) {
      for (const [index, runner] of started.entries()) {
        // The floor, timed just before the runner's own batch and the same way: the whole batch, divided by its items.
        const floor = prepare(root, `direct-${index}-${rep}`, plan.serialItems, (batch += 1));
        const startedAt = performance.now();
        for (let i = 0; i < plan.serialItems; i += 1) await runOrThrow(["bash", task, "-w", floor.ws, "-o", floor.out, "-m", agent], { ...env, SLURM_ARRAY_TASK_ID: String(i) }, "the task script");
        const perItem = (performance.now() - startedAt) / plan.serialItems;
        check(floor, plan.serialItems);
        direct.push(perItem);
        const serial = prepare(root, `serial-${index}-${rep}`, plan.serialItems, (batch += 1));
        perRunner[index].overhead.push((await runner.run(serial, plan.serialItems, 1)) / plan.serialItems - perItem);
        check(serial, plan.serialItems);
        const wide = prepare(root, `wide-${index}-${rep}`, plan.items, (batch += 1));
        perRunner[index].rate.push(plan.items / ((await runner.run(wide, plan.items, plan.slots)) / 1000));
        check(wide, plan.items);
      }
    }
  } finally {
    await Promise.all(started.map((runner) => runner.close()));
  }
  const rows = [{ name: `runners: the task script run directly, ${plan.serialItems} one after another, per item (2-turn run, jq checks, rename)`, values: direct, unit: "ms" }];
  for (const [index, runner] of runners.entries()) {
    rows.push({ name: `runners: ${runner.name}, ${plan.items} items, items/s`, values: perRunner[index].rate, unit: "items/s" });
    rows.push({ name: `runners: ${runner.name}, per-item overhead (${plan.serialItems} items with one slot, per item, minus direct)`, values: perRunner[index].overhead, unit: "ms" });
  }
  return { rows, lost, skipped };
}

/** test/support's hosts and Slurm helpers are TypeScript: bundled once into node_modules/.cache, where their packages resolve. */
async function loadMultihostSupport(repo) {
  const { build } = await import("esbuild");
  const outdir = join(repo, "node_modules/.cache/delta-bench-multihost");
  const names = ["hosts", "slurm", "multihost-preflight"];
  await build({
    entryPoints: Object.fromEntries(names.map((name) => [name, join(repo, `test/support/${name}.ts`)])),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outdir,
    outExtension: { ".js": ".mjs" },
    logLevel: "error",
  });
  const modules = await Promise.all(names.map((name) => import(pathToFileURL(join(outdir, `${name}.mjs`)).href)));
  return Object.assign({}, ...modules);
}

/** A workspace and an out dir whose items.txt holds `count` bench tasks with keys of their own. */
function prepare(root, label, count, batch) {
  const dir = join(root, "runners", label);
  const out = join(dir, "out");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "items.txt"), Array.from({ length: count }, (_, i) => `turns=2 key=runners-${batch}-${i}\n`).join(""));
  return { ws: join(dir, "ws"), out };
}

/** What went wrong with the items of one batch: a missing or unfinished RunResult, or a run whose files do not check out. */
function checkItems({ ws, out }, count) {
  const problems = [];
  for (let i = 0; i < count; i += 1) {
    const result = join(out, `map-${i}.json`);
    const problem = existsSync(result) ? checkRun(join(ws, ".delta", `map-${i}`), readFileSync(result, "utf8")) : "no RunResult";
    if (problem) problems.push(`${out} map-${i}: ${problem}`);
  }
  return problems;
}

async function runOrThrow(argv, env, what) {
  const run = await spawnTimed(argv, env);
  if (run.exitCode !== 0) throw new Error(`${what} exited ${run.exitCode}: ${run.stderr.slice(-2000)}`);
  return run.wall;
}

const taskLine = (task, agent, batch) => quote(["bash", task, "-w", batch.ws, "-o", batch.out, "-m", agent]);

function xargsRunner(task, agent, env) {
  return {
    run: (batch, count, slots) =>
      runOrThrow(["bash", "-c", `seq 0 ${count - 1} | xargs -P ${slots} -I{} env SLURM_ARRAY_TASK_ID={} ${taskLine(task, agent, batch)}`], env, "xargs"),
    close: async () => undefined,
  };
}

/** Two sshd hosts in their own namespaces; every session is told the model server and delta on its command line. */
async function parallelRunner(support, task, agent, env) {
  const pair = await support.startHosts({ count: 2, prefix: "bench" });
  const remoteEnv = quote(Object.entries(env).map(([name, value]) => `${name}=${value}`));
  return {
    run: (batch, count, slots) => {
      const logins = slots === 1 ? "1/benchA" : pair.sshlogin(slots / 2);
      const command = `env SLURM_ARRAY_TASK_ID={} ${remoteEnv} ${taskLine(task, agent, batch)}`;
      const indexes = Array.from({ length: count }, (_, i) => String(i));
      return runOrThrow(["parallel", "--will-cite", "--ssh", pair.sshCommand, "--sshlogin", logins, command, ":::", ...indexes], { ...env, ...pair.parallelEnv }, "parallel");
    },
    close: () => pair.close(),
  };
}

/** A two-node cluster; a batch is `slurm-map.sh submit`, timed until every item's RunResult is in place. */
async function slurmRunner(support, submit, agent, env, cpusPerNode) {
  const cluster = await support.startSlurm({ nodes: 2, cpusPerNode });
  const slurmEnv = { ...env, ...cluster.env };
  return {
    run: async (batch, count, slots) => {
      const started = performance.now();
      const argv = ["bash", submit, "submit", "-i", join(batch.out, "items.txt"), "-w", batch.ws, "-o", batch.out, "-m", agent, ...(slots === 1 ? ["-P", "1"] : [])];
      const submitted = await spawnTimed(argv, slurmEnv);
      if (submitted.exitCode !== 0) throw new Error(`slurm-map.sh submit exited ${submitted.exitCode}: ${submitted.stderr}`);
      const job = submitted.stdout.trim();
      const deadline = started + 300_000;
      const completed = (i) => {
        try {
          return JSON.parse(readFileSync(join(batch.out, `map-${i}.json`), "utf8")).status === "COMPLETED";
        } catch {
          return false;
        }
      };
      let pending = Array.from({ length: count }, (_, i) => i);
      while ((pending = pending.filter((i) => !completed(i))).length > 0) {
        if (performance.now() > deadline) throw new Error(`Slurm job ${job}: items ${pending.join(",")} not completed within 300 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const wall = performance.now() - started;
      // Let the array drain (each task's exit, slurmctld's bookkeeping) before the next batch is timed.
      await cluster.waitForJobs(job, (jobs) => jobs.every(support.isFinished), 60_000, `job ${job} finished`);
      return wall;
    },
    close: () => cluster.close(),
  };
}
