#!/usr/bin/env node
// Benchmarks the real `bin/delta.js` against an instant local model: start-up, per-iteration cost, long runs, memory, fan-out.
//
// Usage: npm run bench [-- --quick] [-- --cache-only] [-- --folder-only] [-- --long-read-only] [-- --sandbox-only] [-- --budget-only] [-- --json <file>] [-- --bin <path/to/bin/delta.js>] [-- --skip-providers] [-- --skip-traces] [-- --list-runs-only] [-- --big-journal-only]
// Every number is a median over repetitions with its spread; see bench/README.md for what each means.
import { closeSync, cpSync, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startModelServer } from "./lib/model-server.mjs";
import { canCountInstructions, countInstructions } from "./lib/instructions.mjs";
import { formatSummary, gaps, median, prefixReuse, summarize } from "./lib/stats.mjs";
import { checkRun } from "./lib/check-run.mjs";
import { cacheKept } from "./lib/cache-kept.mjs";
import { folderRatio } from "./lib/folder-ratio.mjs";
import { growJournal } from "./lib/big-journal.mjs";
import { spawnTimed } from "./lib/spawn-timed.mjs";
import { startOtlpSink } from "./lib/otlp-sink.mjs";
import { costAround, engineCosts } from "./lib/engine-cost.mjs";
import { chainCostPerTurn } from "./lib/chain-cost.mjs";
import { spawnSync } from "node:child_process";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
/**
 * `--bin <path>` benchmarks another build of the launcher, e.g. an older checkout's bin/delta.js.
 * It is started as an executable, the way `delta` and `npx delta` start it, with the `node` on PATH.
 */
const DELTA_BIN = args.includes("--bin") ? resolve(args[args.indexOf("--bin") + 1]) : join(REPO, "bin/delta.js");
const QUICK = args.includes("--quick");
/** GNU time (peak RSS) and bash (CPU to the millisecond) are there: underMeasure(). */
const CAN_MEASURE = existsSync("/usr/bin/time") && existsSync("/bin/bash");
/** Above this median a new file costs more than a quiet ext4 takes to make one (0.02–0.06 ms here). */
const SLOW_CREATE_MS = 0.1;
/** `--sandbox-only`: just the rows of one tool call's cost in a sandbox. */
const SANDBOX_ONLY = args.includes("--sandbox-only");
/** `--budget-only`: just the rows of a model call's admission by a budget (a run's own, a fleet's ledger). */
const BUDGET_ONLY = args.includes("--budget-only");
/** `--cache-only`: just the cache rows (a minute; deterministic, so any machine load will do). */
const CACHE_ONLY = args.includes("--cache-only") || args.includes("--folder-only");
/** `--long-read-only`: just the rows of long runs with 2 KB observations (peak RSS, engine cost at the run's end ÷ at its start). */
const LONG_READ_ONLY = args.includes("--long-read-only");
/** `--list-runs-only`: just the row of a plain `list-runs` in a workspace of 10,000 runs. */
const LIST_RUNS_ONLY = args.includes("--list-runs-only");
/** `--big-journal-only`: just the rows of `show`, `report`, `list-runs` and `continue` on a journal of 2 GB (100 MB with --quick). */
const BIG_JOURNAL_ONLY = args.includes("--big-journal-only");
/** `--instructions-only`: just the rows of instructions an iteration (callgrind; part of the full run, not of --quick). */
const INSTRUCTIONS_ONLY = args.includes("--instructions-only");
/** One of the modes above that runs only its own rows (the cache and folder rows too are left out). */
const ONE_PART_ONLY = SANDBOX_ONLY || BUDGET_ONLY || LONG_READ_ONLY || LIST_RUNS_ONLY || BIG_JOURNAL_ONLY || INSTRUCTIONS_ONLY;
/** `--folder-only`: just the run-folder rows (deterministic: bytes, not time). */
const FOLDER_ONLY = args.includes("--folder-only");
/** The folder rows: run folder ÷ (journal + tool outputs) after this many turns, for contexts (a), (b) and (d). */
const FOLDER_TURNS = [60, 240];
const jsonOut = args.includes("--json") ? args[args.indexOf("--json") + 1] : null;
/** `--skip-providers` leaves out the rows per provider, e.g. for a build from before the native providers. */
const PROVIDERS = args.includes("--skip-providers") ? [] : ["openai", "anthropic", "openai-responses"];
/** `--skip-traces` leaves out the rows with traces exported live, e.g. for a build from before traces. */
const TRACES = !args.includes("--skip-traces");

const plan = QUICK
  ? { startupReps: 3, iterationReps: 5, turns: 30, longTurns: 120, longLate: 100, longReps: 1, flatTurns: 1_000, rssReps: 5, fanOut: 20, fanOutReps: 1, readTurns: 120, readReps: 1, listRuns: 1_000, listReps: 2, bigJournalMb: 100 }
  : { startupReps: 10, iterationReps: 7, turns: 30, longTurns: 1010, longLate: 1000, longReps: 2, flatTurns: 5_000, rssReps: 5, fanOut: 100, fanOutReps: 3, readTurns: 500, readReps: 3, listRuns: 10_000, listReps: 5, bigJournalMb: 2048 };
const LONG_EARLY = 10;
/** The cache rows: 60-turn runs whose tool prints 2 KB, under four contexts (bench/README.md, "Cache kept"). */
const CACHE_TURNS = 60;

const root = mkdtempSync(join(tmpdir(), "delta-bench-"));
const server = await startModelServer();
const rows = [];
let keySeq = 0;

try {
  const agent = writeAgent(join(root, "agent"), null);
  const windowed = writeAgent(join(root, "agent-window"), 20);
  const ws = join(root, "ws");
  mkdirSync(ws);
  const ambient = { ...process.env };
  const noExtraCa = { ...process.env };
  delete noExtraCa.NODE_EXTRA_CA_CERTS;

  let lost = 0;
  if (SANDBOX_ONLY) {
    await sandboxRows(ws, ambient);
  } else if (BUDGET_ONLY) {
    await budgetRows(ws, ambient);
  } else if (LONG_READ_ONLY) {
    await longReadRows(ws, ambient);
  } else if (LIST_RUNS_ONLY) {
    await listRunsRow(agent, ambient);
  } else if (BIG_JOURNAL_ONLY) {
    await bigJournalRows(ws, ambient);
  } else if (INSTRUCTIONS_ONLY) {
    await instructionRows(agent, ws, noExtraCa);
  } else if (!CACHE_ONLY) {
    // Node itself, for scale.
    for (const [label, env] of environments(ambient, noExtraCa)) {
      const walls = [];
      for (let i = 0; i < plan.startupReps; i += 1) walls.push((await spawnTimed([process.execPath, "-e", "0"], env)).wall);
      rows.push(row(`node -e 0 (${label})`, walls, "ms"));
    }

    // One append + fsync of a journal-sized line on this disk: the engine does one per iteration (before the tool runs).
    rows.push(row("append + fsync of one 300-byte line, this disk", fsyncTimes(join(root, "fsync-probe"), 50), "ms", undefined, 2));
    // A new file as each io/ record is made (exclusive, private, 1 KB): the engine makes two an iteration (docs/runs.md), a bare loop none.
    const creates = createTimes(join(root, "create-probe"), 50);
    rows.push(row("create a 1 KB file exclusively, as each io/ record (two an iteration), this disk", creates, "ms", undefined, 2));
    if (median(creates) > SLOW_CREATE_MS) {
      console.error(`[bench] a new file costs ${median(creates).toFixed(2)} ms on this disk: the rows on it include the file system's own search for a free inode past those deleted in the minutes before (bench/README.md); the tmpfs rows do not`);
    }

    // Start-up: process start → first model request, and the whole one-turn run.
    for (const [label, env] of environments(ambient, noExtraCa)) {
      const toFirst = [];
      const walls = [];
      for (let i = 0; i < plan.startupReps; i += 1) {
        const run = await runDelta(agent, ws, 1, env);
        toFirst.push(run.arrivals[0] - run.startedAt);
        walls.push(run.wall);
      }
      rows.push(row(`start → first model request (${label})`, toFirst, "ms"));
      rows.push(row(`one-turn run, wall (${label})`, walls, "ms", label === "as configured" ? { target: 200, le: true } : undefined));
    }

    // Per-iteration overhead: (wall(30 turns) − wall(1 turn)) / 29, one pair per repetition.
    // The same formula for a bare Node loop (HTTP call, spawn echo, append a line; no fsync), in the same repetitions: the machine's floor.
    const overheads = [];
    const arrivalGaps = [];
    const bare = [];
    const bareGaps = [];
    let longest = null;
    for (let i = 0; i < plan.iterationReps; i += 1) {
      const one = await runDelta(agent, ws, 1, ambient);
      const many = await runDelta(agent, ws, plan.turns, ambient);
      overheads.push((many.wall - one.wall) / (plan.turns - 1));
      arrivalGaps.push(median(gaps(many.arrivals)));
      longest = many;
      const bareOne = await runBareLoop(1);
      const bareMany = await runBareLoop(plan.turns);
      bare.push((bareMany.wall - bareOne.wall) / (plan.turns - 1));
      bareGaps.push(median(gaps(bareMany.arrivals)));
    }
    rows.push(row(`per-iteration overhead, (wall(${plan.turns})−wall(1))/${plan.turns - 1}`, overheads, "ms", { target: 8, le: true }));
    rows.push(row("per-iteration, median gap between model requests", arrivalGaps, "ms"));
    rows.push(row("bare Node loop, same formula (floor of this machine)", bare, "ms"));
    rows.push(row("per-iteration overhead ÷ bare Node loop's, medians", [median(overheads) / median(bare)], "×", { target: 1.5, le: true }, 2));
    // The same turn seen from the server, free of start-up's and exit's noise, which the formula's two whole runs carry.
    rows.push(row("bare Node loop, median gap between model requests", bareGaps, "ms"));
    rows.push(row("median gap between model requests ÷ bare Node loop's, medians", [median(arrivalGaps) / median(bareGaps)], "×", undefined, 2));

    // The journal's hash chain, always on: what hashing a turn's lines costs, beside the floor just measured.
    const chain = await chainCostPerTurn(REPO, root, join(ws, ".delta", longest.runId, "journal.jsonl"), plan.turns, 200);
    rows.push(row(`journal hash chain, per turn (a ${plan.turns}-turn run's ${chain.lines} lines hashed as the writer does)`, chain.perTurnUs, "µs"));
    rows.push(row("journal hash chain per turn ÷ bare Node loop per turn", [(median(chain.perTurnUs) / 1000 / median(bare)) * 100], "%", undefined, 2));

    // Live trace export on, to a loopback collector that answers at once: the rows above are export off.
    const sink = TRACES ? await startOtlpSink() : null;
    if (sink) {
      try {
        const traced = { ...ambient, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint };
        const tracedFirst = [];
        const tracedOverheads = [];
        for (let i = 0; i < plan.iterationReps; i += 1) {
          const one = await runDelta(agent, ws, 1, traced);
          const many = await runDelta(agent, ws, plan.turns, traced);
          tracedFirst.push(one.arrivals[0] - one.startedAt);
          tracedOverheads.push((many.wall - one.wall) / (plan.turns - 1));
        }
        if (sink.requests() === 0) throw new Error("live trace export rows: the collector received nothing");
        rows.push(row("start → first model request, traces exported live", tracedFirst, "ms"));
        rows.push(row(`per-iteration overhead, traces exported live, (wall(${plan.turns})−wall(1))/${plan.turns - 1}`, tracedOverheads, "ms"));
      } finally {
        await sink.close();
      }
      // A collector that refuses connections (its port closed): what it costs a one-turn run, against export off in the same repetition.
      const refused = { ...ambient, OTEL_EXPORTER_OTLP_ENDPOINT: await closedPortEndpoint() };
      const refusedWalls = [];
      const refusedCosts = [];
      for (let i = 0; i < plan.startupReps; i += 1) {
        const off = await runDelta(agent, ws, 1, ambient);
        const dead = await runDelta(agent, ws, 1, refused);
        if (!dead.stderr.includes("ECONNREFUSED")) throw new Error(`refused collector row: no warning of the refused connection: ${dead.stderr.slice(0, 500)}`);
        refusedWalls.push(dead.wall);
        refusedCosts.push(dead.wall - off.wall);
      }
      rows.push(row("one-turn run, wall, traces to a collector refusing connections (its port closed)", refusedWalls, "ms"));
      rows.push(row("a collector refusing connections: one-turn run's wall less export off's, same repetition", refusedCosts, "ms", { target: 150, le: true }));
    }

    await sandboxRows(ws, ambient);
    await budgetRows(ws, ambient);

    // Long runs with journal.max_iterations: 20: iteration N's cost against iteration 10's.
    const ratios = [];
    const early = [];
    const late = [];
    for (let i = 0; i < plan.longReps; i += 1) {
      const run = await runDelta(windowed, ws, plan.longTurns, ambient, ["--max-iterations", String(plan.longTurns + 5)]);
      const g = gaps(run.arrivals); // g[k-1] = time from request k to request k+1, i.e. iteration k's cost
      const around = (iteration) => median(g.slice(iteration - 5, iteration + 5));
      early.push(around(LONG_EARLY));
      late.push(around(plan.longLate));
      ratios.push(around(plan.longLate) / around(LONG_EARLY));
    }
    rows.push(row(`long run: iteration ~${LONG_EARLY} (median of 10 gaps)`, early, "ms"));
    rows.push(row(`long run: iteration ~${plan.longLate} (median of 10 gaps)`, late, "ms"));
    rows.push(row(`long run: iteration ${plan.longLate} / iteration ${LONG_EARLY}`, ratios, "×", { target: 1.5, le: true }, 2));

    // Memory flat in the run's length: peak RSS of the windowed agent's runs of 60 and of plan.flatTurns iterations.
    if (CAN_MEASURE) {
      for (const turns of [60, plan.flatTurns]) {
        const peak = await resources(windowed, ws, turns, ambient, ["--max-iterations", String(turns + 5)]);
        rows.push(row(`peak RSS, ${turns}-iteration run (journal.max_iterations: 20)`, [peak.rssMb], "MB", { target: 80, le: true }));
      }
    }

    // Peak RSS and CPU time (user + system, less sensitive to a busy machine than wall time).
    if (CAN_MEASURE) {
      const peaks = [];
      const cpuOne = [];
      const cpuPerIteration = [];
      const bareCpu = [];
      const runFilesCpu = [];
      for (let i = 0; i < plan.rssReps; i += 1) {
        const one = await resources(agent, ws, 1, ambient);
        const many = await resources(agent, ws, plan.turns, ambient);
        peaks.push(many.rssMb);
        cpuOne.push(one.cpuMs);
        cpuPerIteration.push((many.cpuMs - one.cpuMs) / (plan.turns - 1));
        bareCpu.push(await bareCpuPerIteration(root, false));
        runFilesCpu.push(await bareCpuPerIteration(ws, true));
      }
      rows.push(row(`peak RSS, ${plan.turns}-turn run`, peaks, "MB", { target: 80, le: true }));
      rows.push(row("one-turn run, CPU user+sys", cpuOne, "ms"));
      rows.push(row(`per-iteration CPU, (cpu(${plan.turns})−cpu(1))/${plan.turns - 1}`, cpuPerIteration, "ms"));
      rows.push(row("bare Node loop, per-iteration CPU, same formula, taken between the runs above", bareCpu, "ms"));
      rows.push(row("per-iteration CPU ÷ bare Node loop's, medians", [median(cpuPerIteration) / median(bareCpu)], "×", { target: 1.5, le: true }, 2));
      rows.push(row("bare Node loop writing a run's files (journal flushed before each tool, two io/ records, engine.log), per-iteration CPU", runFilesCpu, "ms"));
      rows.push(row("per-iteration CPU ÷ that loop's, medians: what the engine adds to a run's file work", [median(cpuPerIteration) / median(runFilesCpu)], "×", undefined, 2));
      // The same on a file system in memory, where making a file and fsync cost next to nothing: the engine's own work.
      if (existsSync("/dev/shm")) {
        const shm = mkdtempSync(join("/dev/shm", "delta-bench-"));
        try {
          const shmCpu = [];
          const shmBareCpu = [];
          const shmRunFilesCpu = [];
          for (let i = 0; i < plan.rssReps; i += 1) {
            const one = await resources(agent, join(shm, "ws"), 1, ambient);
            const many = await resources(agent, join(shm, "ws"), plan.turns, ambient);
            shmCpu.push((many.cpuMs - one.cpuMs) / (plan.turns - 1));
            shmBareCpu.push(await bareCpuPerIteration(shm, false));
            shmRunFilesCpu.push(await bareCpuPerIteration(shm, true));
          }
          rows.push(row("per-iteration CPU, the workspace on tmpfs (/dev/shm)", shmCpu, "ms"));
          rows.push(row("bare Node loop, per-iteration CPU, its file on tmpfs", shmBareCpu, "ms"));
          rows.push(row("per-iteration CPU ÷ bare Node loop's, both on tmpfs, medians", [median(shmCpu) / median(shmBareCpu)], "×", undefined, 2));
          rows.push(row("bare Node loop writing a run's files on tmpfs, per-iteration CPU", shmRunFilesCpu, "ms"));
          rows.push(row("per-iteration CPU ÷ that loop's, both on tmpfs, medians", [median(shmCpu) / median(shmRunFilesCpu)], "×", undefined, 2));
        } finally {
          rmSync(shm, { recursive: true, force: true });
        }
      }
    } else {
      console.error("[bench] /usr/bin/time or /bin/bash not found: peak RSS and CPU time skipped");
    }

    if (!QUICK) await instructionRows(agent, ws, noExtraCa);
    await longReadRows(ws, ambient);
    await listRunsRow(agent, ambient);
    await bigJournalRows(ws, ambient);

    // Fan-out: many runs at once in one workspace, each with its own run id.
    const rates = [];
    for (let i = 0; i < plan.fanOutReps; i += 1) {
      const fanWs = join(root, `fan-${i}`);
      mkdirSync(fanWs);
      const started = performance.now();
      const runs = await Promise.all(Array.from({ length: plan.fanOut }, () => runDelta(agent, fanWs, 2, ambient, [], true)));
      rates.push(plan.fanOut / ((performance.now() - started) / 1000));
      for (const run of runs) {
        const problem = run.exitCode !== 0 ? `exit ${run.exitCode}: ${run.stderr.slice(0, 300)}` : checkRun(join(fanWs, ".delta", run.runId), run.stdout);
        if (problem) {
          lost += 1;
          console.error(`[bench] fan-out run ${run.runId}: ${problem}`);
        }
      }
    }
    rows.push(row(`fan-out: ${plan.fanOut} runs at once, runs/s`, rates, "runs/s"));
    rows.push({ name: `fan-out: lost or corrupted runs (of ${plan.fanOut * plan.fanOutReps})`, unit: "", value: String(lost), spread: "", target: "0", met: lost === 0 ? "yes" : "NO" });

    // Fan-out runners: xargs -P, GNU parallel over ssh and a Slurm job array, each running examples/slurm's task script per item (minutes: not in --quick).
    if (!QUICK) {
      const { measureRunners } = await import("./lib/runner-throughput.mjs");
      const runners = await measureRunners({ repo: REPO, deltaBin: DELTA_BIN, root, server, agent, plan: { items: 40, serialItems: 8, reps: 3, slots: 4 } });
      for (const reason of runners.skipped) console.error(`[bench] runners: ${reason}; its rows are left out`);
      for (const measured of runners.rows) rows.push(row(measured.name, measured.values, measured.unit));
      rows.push({ name: "runners: lost or corrupted items (of all batches)", unit: "", value: String(runners.lost), spread: "", target: "0", met: runners.lost === 0 ? "yes" : "NO" });
      lost += runners.lost;
    }

    // Per provider, against the same instant server speaking its protocol; the providers take turns within each repetition.
    const perProvider = new Map(PROVIDERS.map((provider) => [provider, { agent: writeAgent(join(root, `agent-${provider}`), null, provider), toFirst: [], overheads: [], reuse: [], cpu: [] }]));
    for (let i = 0; i < Math.max(plan.startupReps, plan.iterationReps); i += 1) {
      for (const measured of perProvider.values()) {
        if (i < plan.startupReps) {
          const one = await runDelta(measured.agent, ws, 1, ambient);
          measured.toFirst.push(one.arrivals[0] - one.startedAt);
        }
        if (i < plan.iterationReps) {
          const one = await runDelta(measured.agent, ws, 1, ambient);
          const many = await runDelta(measured.agent, ws, plan.turns, ambient);
          measured.overheads.push((many.wall - one.wall) / (plan.turns - 1));
          measured.reuse.push(100 * prefixReuse(server.bodies(many.runId)).overall);
        }
        if (i < plan.rssReps && CAN_MEASURE) {
          const one = await resources(measured.agent, ws, 1, ambient);
          const many = await resources(measured.agent, ws, plan.turns, ambient);
          measured.cpu.push((many.cpuMs - one.cpuMs) / (plan.turns - 1));
        }
      }
    }
    for (const [provider, measured] of perProvider) {
      rows.push(row(`${provider}: start → first model request`, measured.toFirst, "ms"));
      rows.push(row(`${provider}: per-iteration overhead, (wall(${plan.turns})−wall(1))/${plan.turns - 1}`, measured.overheads, "ms"));
      if (measured.cpu.length > 0) rows.push(row(`${provider}: per-iteration CPU, (cpu(${plan.turns})−cpu(1))/${plan.turns - 1}`, measured.cpu, "ms"));
      rows.push(row(`${provider}: prefix reuse, ${plan.turns}-turn run (bytes of each request repeating the previous one's start)`, measured.reuse, "%", { target: 90, le: false }));
    }
  }

  // Run folders: io/invocations/ stores each distinct message once, so a folder grows with the run, not with its square.
  for (const { label, contextYaml } of ONE_PART_ONLY ? [] : cacheCases().filter((each) => !each.label.startsWith("(c)"))) {
    const home = writeCacheAgent(join(root, `folder-${label.slice(1, 2)}`), contextYaml);
    for (const turns of FOLDER_TURNS) {
      keySeq += 1;
      const key = `folder-${process.pid}-${keySeq}`;
      const run = await spawnTimed(
        [DELTA_BIN, "run", "--agent", home, "-w", ws, "--run-id", key, "-m", `turns=${turns} key=${key} tool=read`, "--format", "json", "--max-iterations", String(turns + 5)],
        modelEnv(ambient),
      );
      const name = `run folder ÷ (journal + tool outputs), ${label} (${turns} turns, 2 KB observations)`;
      if (run.exitCode !== 0) {
        rows.push({ name, unit: "×", value: "—", spread: `the run exited ${run.exitCode}: ${oneLineOf(run.stderr)}`, target: "≤ 1.5", met: "NO" });
        continue;
      }
      const measured = folderRatio(join(ws, ".delta", key));
      const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;
      rows.push({
        name,
        unit: "×",
        value: measured.ratio.toFixed(2),
        spread: `folder ${kb(measured.folder)}: journal ${kb(measured.journal)}, tool outputs ${kb(measured.toolOutputs)}, io/invocations ${kb(measured.invocations)} (deterministic, n=1)`,
        target: "≤ 1.5",
        met: measured.ratio <= 1.5 ? "yes" : "NO",
      });
    }
  }

  // Cache kept: how much of each request repeats the previous one from its start, under four contexts.
  for (const { label, contextYaml, target } of ONE_PART_ONLY || FOLDER_ONLY ? [] : cacheCases()) {
    const home = writeCacheAgent(join(root, `cache-${label.slice(1, 2)}`), contextYaml);
    keySeq += 1;
    const key = `cache-${process.pid}-${keySeq}`;
    const run = await spawnTimed(
      [DELTA_BIN, "run", "--agent", home, "-w", ws, "--run-id", key, "-m", `turns=${CACHE_TURNS} key=${key} tool=read`, "--format", "json", "--max-iterations", String(CACHE_TURNS + 5)],
      modelEnv(ambient),
    );
    const name = `cache kept, ${label} (${CACHE_TURNS} turns, 2 KB observations)`;
    if (run.exitCode !== 0) {
      // An older build (--bin) may not know the context: the row says so, the other rows stand.
      rows.push({ name, unit: "%", value: "—", spread: `the run exited ${run.exitCode}: ${oneLineOf(run.stderr)}`, target: `≥ ${target}`, met: "NO" });
      continue;
    }
    const measured = cacheKept(server.bodies(key).map((body) => JSON.stringify(JSON.parse(body).messages)));
    rows.push({
      name,
      unit: "%",
      value: (measured.kept * 100).toFixed(1),
      spread: `${(measured.tokensSent / 1000).toFixed(0)}k prompt tokens sent, ${(measured.servable * 100).toFixed(0)}% of them servable from cache; ${measured.changed} of ${measured.requests - 1} requests change the prefix (deterministic, n=1)`,
      target: `≥ ${target}`,
      met: measured.kept * 100 >= target ? "yes" : "NO",
    });
  }

  printTable(rows);
  if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ quick: QUICK, plan, rows }, null, 2)}\n`);
  if (lost > 0) process.exitCode = 1;
} finally {
  await server.close();
  rmSync(root, { recursive: true, force: true });
}

function oneLineOf(text) {
  return text.replace(/\s+/g, " ").replace(/\|/g, "/").trim().slice(0, 160);
}

function fsyncTimes(path, count) {
  const fd = openSync(path, "a");
  const line = `${"x".repeat(299)}\n`;
  const times = [];
  try {
    for (let i = 0; i < count; i += 1) {
      const started = performance.now();
      writeSync(fd, line);
      fsyncSync(fd);
      times.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
  }
  return times;
}

/** Milliseconds to create, write and close each of `count` new 1 KB files in `dir`, exclusively and private, as io/ records are. */
function createTimes(dir, count) {
  mkdirSync(dir, { recursive: true });
  const record = `${JSON.stringify({ output: "x".repeat(1000) })}\n`;
  const times = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    writeFileSync(join(dir, `${i}.json`), record, { flag: "wx", mode: 0o600 });
    times.push(performance.now() - started);
  }
  return times;
}

function environments(ambient, noExtraCa) {
  const list = [["as configured", ambient]];
  if (process.env.NODE_EXTRA_CA_CERTS) list.push(["without NODE_EXTRA_CA_CERTS", noExtraCa]);
  return list;
}

function writeAgent(home, journalWindow, provider = null, sandbox = null, llmExtra = "") {
  mkdirSync(home, { recursive: true });
  const providerLine = provider === null ? "" : `  provider: ${provider}\n`;
  const sandboxLine = sandbox === null ? "" : `sandbox: ${sandbox}\n`;
  writeFileSync(join(home, "agent.yaml"), `name: bench-agent\nllm:\n${providerLine}  model: bench-model\n${llmExtra}${sandboxLine}tools:\n  - name: echo\n    exec: "echo \${text}"\n`);
  writeFileSync(join(home, "system_prompt.md"), "You are a benchmark agent.");
  const journal = journalWindow === null ? "  - type: journal\n" : `  - type: journal\n    max_iterations: ${journalWindow}\n`;
  writeFileSync(join(home, "context.yaml"), `sources:\n  - type: file\n    path: '\${AGENT_HOME}/system_prompt.md'\n  - type: file\n    path: '\${CWD}/DELTA.md'\n    on_missing: skip\n${journal}`);
  return home;
}

/** The four contexts of the cache rows: (d) is examples/memory-folding's context.yaml and generator as they are. */
function cacheCases() {
  const prompt = "  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n";
  return [
    { label: "(a) default context", contextYaml: `sources:\n${prompt}  - type: journal\n`, target: 99 },
    { label: "(b) max_iterations: 20", contextYaml: `sources:\n${prompt}  - type: journal\n    max_iterations: 20\n`, target: 85 },
    { label: "(c) max_tokens: 12000", contextYaml: `sources:\n${prompt}  - type: journal\n    max_tokens: 12000\n`, target: 85 },
    { label: "(d) the memory-folding example", contextYaml: readFileSync(join(REPO, "examples/memory-folding/context.yaml"), "utf8"), target: 85 },
  ];
}

/** An agent whose `read` tool prints its call's `k/N` and then 2 KB of a fixed text, from a different offset each call. */
function writeCacheAgent(home, contextYaml, llmExtra = "") {
  mkdirSync(join(home, "tools"), { recursive: true });
  const agentYaml = [
    "name: bench-cache",
    "llm:",
    `  model: gpt-4o-mini\n${llmExtra}`.trimEnd(),
    "tools:",
    "  - name: read",
    '    shell: "echo ${text}; tail -c +${offset} ${AGENT_HOME}/corpus.txt | head -c 2048; echo"',
  ].join("\n");
  writeFileSync(join(home, "agent.yaml"), `${agentYaml}\n`);
  writeFileSync(join(home, "system_prompt.md"), "You read a long text one chunk at a time and keep notes of what matters.");
  writeFileSync(join(home, "context.yaml"), contextYaml);
  writeFileSync(join(home, "tools", "fold-memory.mjs"), readFileSync(join(REPO, "examples/memory-folding/tools/fold-memory.mjs")), { mode: 0o755 });
  const words = ["context", "window", "journal", "prefix", "cache", "token", "iteration", "budget", "summary", "model", "request", "observation"];
  writeFileSync(join(home, "corpus.txt"), Array.from({ length: 30_000 }, (_, i) => words[(i * 7 + Math.floor(i / 13)) % words.length]).join(" "));
  return home;
}

function modelEnv(base) {
  // The launcher starts the `node` on PATH: make it this one.
  const env = { ...base, PATH: `${dirname(process.execPath)}:${base.PATH ?? ""}`, DELTA_API_KEY: "sk-bench", DELTA_BASE_URL: server.baseUrl };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DELTA_PROVIDER"]) delete env[name];
  return env;
}

/**
 * Instructions an iteration in user space (callgrind, lib/instructions.mjs), (count(turns) − count(1)) / (turns − 1), of
 * the engine, the bare loop and the loop writing a run's files: the engine's own work in a figure a busy machine does not move.
 */
async function instructionRows(agent, ws, base) {
  const env = modelEnv(base);
  if (!(await canCountInstructions())) {
    console.error("[bench] valgrind not found: the instruction rows skipped (apt install valgrind)");
    return;
  }
  const perIteration = async (argvFor) => {
    const [one, many] = await Promise.all([countInstructions(argvFor(1), env), countInstructions(argvFor(plan.turns), env)]);
    return (many - one) / (plan.turns - 1) / 1e6;
  };
  const engine = await perIteration((turns) => [process.execPath, ...deltaRunArgv(agent, ws, turns).argv]);
  const bare = await perIteration((turns) => bareLoopArgv(turns, root, false).argv);
  const runFiles = await perIteration((turns) => bareLoopArgv(turns, ws, true).argv);
  rows.push(row(`instructions per iteration in user space (callgrind, (count(${plan.turns}) − count(1)) / ${plan.turns - 1}): the engine`, [engine], "M", undefined, 2));
  rows.push(row("the same for the bare Node loop", [bare], "M", undefined, 2));
  rows.push(row("the same for the bare Node loop writing a run's files", [runFiles], "M", undefined, 2));
  rows.push(row("instructions per iteration ÷ the bare Node loop's (the kernel's work and the children's not counted)", [engine / bare], "×", undefined, 2));
}

/** One tool call's cost in a box: the per-iteration formula with every echo boxed, against off (only where bwrap can run). */
async function sandboxRows(ws, ambient) {
  if (spawnSyncOk(["bwrap", "--ro-bind", "/", "/", "--unshare-user", "--unshare-net", "true"])) {
    const boxes = [
      ["off", "{mode: off}"],
      ["workspace-write", "{mode: workspace-write}"],
      ["workspace-write, host list", "{mode: workspace-write, network: [example.com]}"],
    ];
    const perCall = boxes.map(([label, policy]) => ({ label, agent: writeAgent(join(root, `agent-box-${label.replace(/\W+/g, "-")}`), null, null, policy), overheads: [], inherited: [] }));
    // The same unboxed call from an engine whose caller left 64 devices open (not reopened, unlike files and pipes): each child gets /dev/null over every one.
    const open = Array.from({ length: 64 }, () => openSync("/dev/null", "r"));
    perCall.push({ ...perCall[0], label: "off, 64 descriptors left open by the caller", overheads: [], inherited: open });
    // Alone (--sandbox-only), the floor is taken between the boxes too: a comparison of two builds reads each against its own.
    const bare = [];
    for (let i = 0; i < plan.iterationReps; i += 1) {
      for (const box of perCall) {
        const one = await runDelta(box.agent, ws, 1, ambient, [], false, box.inherited);
        const many = await runDelta(box.agent, ws, plan.turns, ambient, [], false, box.inherited);
        box.overheads.push((many.wall - one.wall) / (plan.turns - 1));
      }
      if (SANDBOX_ONLY) {
        const one = await runBareLoop(1);
        const many = await runBareLoop(plan.turns);
        bare.push((many.wall - one.wall) / (plan.turns - 1));
      }
    }
    for (const fd of open) closeSync(fd);
    for (const box of perCall) rows.push(row(`per-iteration overhead, one echo per call, sandbox ${box.label}`, box.overheads, "ms"));
    if (bare.length > 0) rows.push(row("bare Node loop, same formula, taken between the sandbox rows", bare, "ms"));
  } else {
    console.error("[bench] bwrap cannot run here: the sandbox rows are skipped");
  }
}

/**
 * What admitting each model call costs: the per-iteration formula for a priced agent with no budget, with a run's own
 * budget (`--max-cost-usd`: the worst case priced and checked against the journal's sums), and with a fleet's ledger
 * (`--budget-file`: a reservation and a settlement, each a new state created exclusively and flushed, per call).
 */
async function budgetRows(ws, ambient) {
  const agent = writeAgent(join(root, "agent-priced"), null, null, null, "  pricing: {input_per_million: 0.15, output_per_million: 0.6}\n");
  const ledger = join(root, "fleet.budget");
  if (!spawnSyncOk([process.execPath, DELTA_BIN, "budget", "init", ledger, "--limit-usd", "1000000"])) throw new Error("delta budget init failed");
  const cases = [
    ["no budget", []],
    ["--max-cost-usd", ["--max-cost-usd", "1000000"]],
    ["--budget-file (a ledger)", ["--budget-file", ledger]],
  ].map(([label, extra]) => ({ label, extra, overheads: [] }));
  for (let i = 0; i < plan.iterationReps; i += 1) {
    for (const each of cases) {
      const one = await runDelta(agent, ws, 1, ambient, each.extra);
      const many = await runDelta(agent, ws, plan.turns, ambient, each.extra);
      each.overheads.push((many.wall - one.wall) / (plan.turns - 1));
    }
  }
  for (const each of cases) rows.push(row(`per-iteration overhead, priced agent, ${each.label}`, each.overheads, "ms"));
}

/**
 * Long runs whose `read` tool prints 2 KB, default context: peak RSS with gpt-4o-mini's 128k window
 * (the window moves several times), and the engine's own cost at the run's end against iteration
 * 10 with `llm.context_window: 1000000` (nothing is dropped: every request is the whole conversation).
 */
async function longReadRows(ws, ambient) {
  const turns = plan.readTurns;
  const defaultContext = cacheCases()[0].contextYaml;
  const windowed = writeCacheAgent(join(root, "long-read-128k"), defaultContext);
  const wide = writeCacheAgent(join(root, "long-read-1m"), defaultContext, "  context_window: 1000000\n");
  const peaks = [];
  const early = [];
  const late = [];
  const ratios = [];
  for (let i = 0; i < plan.readReps; i += 1) {
    if (existsSync("/usr/bin/time")) peaks.push((await readRun(windowed, ws, turns, ambient, true)).rssMb);
    const run = await readRun(wide, ws, turns, ambient, false);
    const costs = engineCosts(join(ws, ".delta", run.runId), run.arrivals, server.replied(run.runId));
    early.push(costAround(costs, LONG_EARLY));
    late.push(costAround(costs, turns - 5));
    ratios.push(costAround(costs, turns - 5) / costAround(costs, LONG_EARLY));
  }
  if (peaks.length > 0) rows.push(row(`peak RSS, ${turns}-turn run of 2 KB observations (gpt-4o-mini, 128k window)`, peaks, "MB", { target: 90, le: true }));
  rows.push(row(`engine cost, iteration ~${LONG_EARLY} (2 KB observations, context_window 1000000; median of 10, tool time excluded)`, early, "ms"));
  rows.push(row(`engine cost, iteration ~${turns}`, late, "ms"));
  rows.push(row(`engine cost, iteration ${turns} / iteration ${LONG_EARLY} (whole conversation)`, ratios, "×", { target: 2, le: true }, 2));
}

/** A plain `delta list-runs` (text) in one workspace of plan.listRuns finished two-turn runs: copies of one real run, each under its own id. */
async function listRunsRow(agent, ambient) {
  const listWs = join(root, "list-runs");
  mkdirSync(listWs);
  // An id as long as the copies' ids, so each copy's journal keeps the size its metadata.json records.
  const seed = (await runDelta(agent, listWs, 2, ambient)).runId;
  const seedDir = join(listWs, ".delta", seed);
  const width = String(plan.listRuns).length;
  for (let i = 0; i < plan.listRuns; i += 1) {
    const id = `${seed.slice(0, seed.length - width - 1)}-${String(i).padStart(width, "0")}`;
    const dir = join(listWs, ".delta", id);
    cpSync(seedDir, dir, { recursive: true });
    for (const file of ["journal.jsonl", "metadata.json"]) writeFileSync(join(dir, file), readFileSync(join(seedDir, file), "utf8").replaceAll(JSON.stringify(seed), JSON.stringify(id)));
  }
  const walls = [];
  for (let i = 0; i < plan.listReps; i += 1) {
    const listed = await spawnTimed([DELTA_BIN, "list-runs", "-w", listWs], modelEnv(ambient));
    if (listed.exitCode !== 0) throw new Error(`list-runs exited ${listed.exitCode}: ${listed.stderr.slice(0, 2000)}`);
    const lines = listed.stdout.trim().split("\n").length;
    if (lines !== plan.listRuns + 2) throw new Error(`list-runs listed ${lines - 1} runs, expected ${plan.listRuns + 1}`);
    walls.push(listed.wall / 1000);
  }
  rows.push(row(`plain \`list-runs\` of ${plan.listRuns} finished runs in one workspace, wall`, walls, "s", plan.listRuns === 10_000 ? { target: 1.5, le: true } : undefined, 2));
}

/**
 * A journal grown to plan.bigJournalMb as a long run writes it: a real 40-turn run of the `read` agent (2 KB
 * observations, default context, `llm.context_window: 16000`, so its window moves every 10 or so iterations, each
 * move journaled as CONTEXT_WINDOW), one period between two moves repeated and renumbered. `show`, `report` and
 * `list-runs` read it (seconds per GB, peak RSS), then `continue` goes on with it (the time until its first model
 * request, its peak RSS, and seconds per GB).
 */
async function bigJournalRows(ws, ambient) {
  // A model window small enough that 40 turns of 2 KB observations move it every 10 or so.
  const home = writeCacheAgent(join(root, "big-journal"), cacheCases()[0].contextYaml, "  context_window: 16000\n");
  const { runId } = await readRun(home, ws, 40, ambient, false);
  const runDir = join(ws, ".delta", runId);
  const grown = growJournal(runDir, plan.bigJournalMb * 1024 * 1024);
  const size = `${(grown.bytes / 2 ** 30).toFixed(2)} GB journal (${grown.iterations} iterations, window moved ${grown.windowMoves} times, every ${grown.periodIterations})`;
  const gigabytes = grown.bytes / 2 ** 30;
  // The readers stream the journal: each is timed, and its peak RSS taken, with its output thrown away.
  for (const [label, command] of [["show", ["show", runId, "-w", ws]], ["report", ["report", runId, "-w", ws]], ["list-runs", ["list-runs", "-w", ws]]]) {
    const timeOut = join(root, `${runId}.${label}.time`);
    // list-runs reads the journal only when metadata.json does not describe the run at rest.
    const metadata = join(runDir, "metadata.json");
    if (label === "list-runs") renameSync(metadata, `${metadata}.aside`);
    const read = await spawnTimed(["/bin/sh", "-c", '"$@" >/dev/null', "sh", "/usr/bin/time", "-f", "%M %e", "-o", timeOut, DELTA_BIN, ...command], modelEnv(ambient));
    if (label === "list-runs") renameSync(`${metadata}.aside`, metadata);
    if (read.exitCode !== 0) {
      rows.push({ name: `${label} of a ${size}`, unit: "s", value: "—", spread: `exited ${read.exitCode}: ${oneLineOf(read.stderr)}`, target: "", met: "NO" });
      continue;
    }
    const [rssKb, wall] = readFileSync(timeOut, "utf8").trim().split("\n").at(-1).split(" ").map(Number);
    rows.push(row(`${label} of a ${size}: seconds per GB of journal`, [wall / gigabytes], "s", undefined, 1));
    rows.push(row(`${label} of a ${size}: peak RSS`, [rssKb / 1024], "MB", undefined, 0));
  }
  const out = join(root, `${runId}.continue.time`);
  const startedAt = performance.now();
  const argv = [DELTA_BIN, "continue", "--run-id", runId, "-w", ws, "-m", "go on", "--format", "json", "--accept-endpoint"];
  const run = await spawnTimed(["/usr/bin/time", "-f", "%M", "-o", out, ...argv], modelEnv(ambient));
  const first = server.arrivals(runId).find((at) => at > startedAt);
  rmSync(runDir, { recursive: true, force: true });
  if (run.exitCode !== 0 || first === undefined) {
    rows.push({ name: `continue of a ${size}: start → first model request`, unit: "s", value: "—", spread: `exited ${run.exitCode}: ${oneLineOf(run.stderr)}`, target: "", met: "NO" });
    return;
  }
  const seconds = (first - startedAt) / 1000;
  rows.push(row(`continue of a ${size}: start → first model request`, [seconds], "s", undefined, 1));
  rows.push(row(`continue of a ${size}: seconds per GB of journal`, [seconds / gigabytes], "s", undefined, 1));
  rows.push(row(`continue of a ${size}: peak RSS`, [Number(readFileSync(out, "utf8").trim().split("\n").at(-1)) / 1024], "MB", undefined, 0));
}

/** One run of the `read` agent; with `timed`, under /usr/bin/time for its peak RSS. */
async function readRun(home, ws, turns, env, timed) {
  keySeq += 1;
  const runId = `read-${process.pid}-${keySeq}`;
  const out = join(root, `${runId}.time`);
  const argv = [DELTA_BIN, "run", "--agent", home, "-w", ws, "--run-id", runId, "-m", `turns=${turns} key=${runId} tool=read`, "--format", "json", "--max-iterations", String(turns + 5)];
  const run = await spawnTimed(timed ? ["/usr/bin/time", "-f", "%M", "-o", out, ...argv] : argv, modelEnv(env));
  if (run.exitCode !== 0) throw new Error(`run ${runId} exited ${run.exitCode}: ${run.stderr.slice(0, 2000)}`);
  const rssMb = timed ? Number(readFileSync(out, "utf8").trim().split("\n").at(-1)) / 1024 : null;
  return { runId, rssMb, arrivals: server.arrivals(runId) };
}

function spawnSyncOk(argv) {
  return spawnSync(argv[0], argv.slice(1), { stdio: "ignore" }).status === 0;
}

/** One `delta run` with `turns` model calls; a failure throws unless `tolerant` (fan-out checks runs itself). */
async function runDelta(agent, ws, turns, env, extra = [], tolerant = false, inherited = []) {
  const { runId, argv } = deltaRunArgv(agent, ws, turns, extra);
  const run = await spawnTimed(argv, modelEnv(env), inherited);
  const arrivals = server.arrivals(runId);
  if (run.exitCode !== 0 && !tolerant) throw new Error(`run ${runId} exited ${run.exitCode}: ${run.stderr.slice(0, 2000)}`);
  if (arrivals.length !== turns && run.exitCode === 0) throw new Error(`run ${runId}: expected ${turns} model calls, saw ${arrivals.length}`);
  return { ...run, runId, arrivals };
}

/** The bare loop's per-iteration CPU, (cpu(turns) − cpu(1)) / (turns − 1), its files in `dir`. */
async function bareCpuPerIteration(dir, runFiles) {
  const one = await runBareLoop(1, true, dir, runFiles);
  const many = await runBareLoop(plan.turns, true, dir, runFiles);
  return (many.cpuMs - one.cpuMs) / (plan.turns - 1);
}

/**
 * The bare Node loop (bench/lib/bare-loop.mjs) for `turns` model calls, appending to a file in `dir` (with `runFiles`,
 * writing a run's files there as it goes); `timed`: with its CPU time (ms, user + system, `echo`s included).
 */
async function runBareLoop(turns, timed = false, dir = root, runFiles = false) {
  const { key, argv } = bareLoopArgv(turns, dir, runFiles);
  const out = join(root, `${key}.time`);
  const run = await spawnTimed(timed ? underMeasure(out, argv) : argv, process.env);
  const arrivals = server.arrivals(key);
  if (run.exitCode !== 0 || arrivals.length !== turns) throw new Error(`bare loop ${key} failed: ${run.stderr}`);
  if (!timed) return { ...run, arrivals };
  return { ...run, arrivals, cpuMs: measurements(out).cpuMs };
}

/** `delta run` of `agent` in `ws` for `turns` model calls (the model server's task) under a new run id, JSON out, then `extra`. */
function deltaRunArgv(agent, ws, turns, extra = []) {
  keySeq += 1;
  const runId = `bench-${process.pid}-${keySeq}`;
  return { runId, argv: [DELTA_BIN, "run", "--agent", agent, "-w", ws, "--run-id", runId, "-m", `turns=${turns} key=${runId}`, "--format", "json", ...extra] };
}

/** The bare loop's command line for `turns` model calls under a new key, its file (or with `runFiles` its run folder) in `dir`. */
function bareLoopArgv(turns, dir, runFiles) {
  keySeq += 1;
  const key = `bare-${process.pid}-${keySeq}`;
  const file = runFiles ? [join(dir, key), "--run-files"] : [join(dir, `${key}.jsonl`)];
  return { key, argv: [process.execPath, join(REPO, "bench/lib/bare-loop.mjs"), server.baseUrl, String(turns), key, ...file] };
}

/**
 * `argv` under GNU time for its peak RSS (%M) and under bash, whose `times` gives the CPU of what it ran (user and
 * system, the process and its children) to the millisecond: GNU time's %U and %S count hundredths, a step of 0.34 ms in
 * a 30-turn run's per-iteration CPU, a seventh of the bare loop's. Read back with measurements(out).
 */
function underMeasure(out, argv) {
  return ["/usr/bin/time", "-f", "%M", "-o", `${out}.rss`, "/bin/bash", "-c", 'cpu=$1; shift; "$@"; status=$?; times > "$cpu"; exit $status', "bash", `${out}.cpu`, ...argv];
}

function measurements(out) {
  const rssKb = Number(readFileSync(`${out}.rss`, "utf8").trim().split("\n").at(-1));
  // bash's `times`: its own user and system time on the first line, its children's on the second, as 0m0.123s.
  const seconds = readFileSync(`${out}.cpu`, "utf8").trim().split("\n")[1].split(" ").map((field) => {
    const [, minutes, rest] = /^(\d+)m([\d.]+)s$/.exec(field);
    return Number(minutes) * 60 + Number(rest);
  });
  return { rssMb: rssKb / 1024, cpuMs: (seconds[0] + seconds[1]) * 1000 };
}

/** An OTLP endpoint on 127.0.0.1 whose port was just closed: connecting to it is refused. */
async function closedPortEndpoint() {
  const { createServer } = await import("node:net");
  const probe = createServer();
  await new Promise((done) => probe.listen(0, "127.0.0.1", done));
  const { port } = probe.address();
  await new Promise((done) => probe.close(done));
  return `http://127.0.0.1:${port}`;
}

/** Peak RSS (MB) and CPU time (ms, user + system) of one run (underMeasure()); the tool's children count too. */
async function resources(agent, ws, turns, env, extra = []) {
  const { runId, argv } = deltaRunArgv(agent, ws, turns, extra);
  const out = join(root, `${runId}.time`);
  const run = await spawnTimed(underMeasure(out, argv), modelEnv(env));
  if (run.exitCode !== 0) throw new Error(`run ${runId} failed: ${run.stderr}`);
  return measurements(out);
}

function row(name, values, unit, target, decimals = 1) {
  const s = summarize(values);
  const met = target ? (target.le ? s.median <= target.target : s.median >= target.target) : null;
  return {
    name,
    unit,
    value: s.median.toFixed(decimals),
    spread: formatSummary(s, decimals).replace(/^[^(]*\(/, "").replace(/\)$/, ""),
    target: target ? `${target.le ? "≤" : "≥"} ${target.target}` : "",
    met: met === null ? "" : met ? "yes" : "NO",
    summary: s,
  };
}

function printTable(list) {
  const lines = [
    `Delta Engine benchmark${QUICK ? " (--quick)" : ""} of ${DELTA_BIN} — node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
    "",
    "| Measure | Median | Unit | Spread | Target | Met |",
    "|---|---:|---|---|---|---|",
    ...list.map((r) => `| ${r.name} | ${r.value} | ${r.unit} | ${r.spread} | ${r.target} | ${r.met} |`),
  ];
  console.log(lines.join("\n"));
}
