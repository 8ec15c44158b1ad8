// Crash campaign: starts many multi-step runs, kill -9s each at a chosen moment, recovers them and checks every journal.
import { existsSync, mkdirSync, readFileSync, readdirSync, watch } from "node:fs";
import { deriveRunState, readJournal } from "./journal-read.js";
import { join } from "node:path";

import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { STAGING_PREFIX } from "../../src/store/run-dir.js";

import { delta, modelEnv, runDir, spawnDelta, tempDir, removeDir, waitFor, writeAgent } from "../e2e/harness.js";
import { fault, messagesOf, type RecordedRequest, reply, startMockLlm, type Step } from "./mock-llm.js";

/** Where in a run the kill lands; claim: the moment its directory appears in .delta; random: a random time after that. */
export type KillMode = "model" | "tool" | "random" | "claim";

export interface CampaignOptions {
  runs: number;
  seed: number;
  /** Runs in flight at once. */
  concurrency: number;
  /**
   * Race mode: each recovery starts this many `delta continue` (or, for a run that never came to exist, `delta run`)
   * at once on the same run, and may kill one of them mid-way too; rounds repeat until the run is COMPLETED.
   */
  racers?: number;
}

interface RunPlan {
  runId: string;
  mode: KillMode;
  /** Successful `mark` calls the scripted model wants before it answers. */
  marks: number;
  /** model: the n-th model request of the run is held and the run killed meanwhile; tool: the n-th tool execution. */
  target: number;
  /** random: milliseconds after the run's directory appeared. */
  killAfterMs: number;
  /** Race mode: kill one of the first round's racers this many ms after they start, or never (null). */
  killRacerAfterMs: number | null;
  requests: number;
  holding: boolean;
  killed: boolean;
}

export interface RunReport {
  runId: string;
  mode: KillMode;
  /** The process was still running when SIGKILL reached it. */
  killed: boolean;
  /** How the run got to COMPLETED: by `continue`, by a fresh `run` (killed before its directory existed), or it already had. */
  recovery: "continue" | "rerun" | "none";
  status: string;
  /** Race mode: processes started to recover the run, how many were refused (126), how many killed. */
  racers: number;
  refused: number;
  racersKilled: number;
  actionResults: number;
  synthesized: number;
  markerExecutions: number;
  problems: string[];
}

export interface CampaignReport {
  runs: RunReport[];
  killed: number;
  recovered: number;
  lost: number;
  /** Journals the engine's own reader refuses. */
  invalidJournals: number;
  /** Runs with work done twice: a result recorded twice, a tool run twice, or a completed run driven again. */
  duplicated: number;
  racers: number;
  refused: number;
  racersKilled: number;
  synthesized: number;
  markerExecutions: number;
  nonSynthesizedMarkResults: number;
  problems: string[];
}

const SYNTHESIZED = "The engine stopped before this action finished";
/** How problems that count as an invalid journal or duplicated work begin. */
const INVALID = "invalid journal:";
const DUPLICATED = "duplicated:";
const TOOLS = `tools:
  - name: mark
    shell: "mkdir -p markers && echo ran >> markers/\${tag} && sleep \${pause} && echo marked \${tag}"
`;

/** mulberry32: a small seeded generator, so a failing campaign can be replayed with its seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export async function runCrashCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const random = seededRandom(options.seed);
  const root = tempDir("delta-crash-");
  const plans = new Map<string, RunPlan>();
  const modes: KillMode[] = ["model", "tool", "random", "claim"];
  for (let index = 0; index < options.runs; index += 1) {
    const runId = `crash-${options.seed}-${index}`;
    const marks = 2 + Math.floor(random() * 3);
    const mode = modes[index % modes.length]!;
    plans.set(runId, {
      runId,
      mode,
      marks,
      // Every run makes at least two model requests and `marks` tool executions, so the target is always reached.
      target: 1 + Math.floor(random() * (mode === "model" ? 2 : marks)),
      killAfterMs: Math.floor(random() * 1200),
      killRacerAfterMs: random() < 0.5 ? Math.floor(random() * 800) : null,
      requests: 0,
      holding: false,
      killed: false,
    });
  }
  const server = await startMockLlm((request, ordinal) => scriptedModel(plans, request, ordinal));
  const agent = writeAgent(root, { tools: TOOLS, systemPrompt: "Mark each step with the mark tool, then report." });
  const workDir = join(root, "ws");
  mkdirSync(join(workDir, ".delta"), { recursive: true });
  try {
    const reports: RunReport[] = [];
    const queue = [...plans.values()];
    const workers = Array.from({ length: Math.min(options.concurrency, queue.length) }, async () => {
      for (let plan = queue.shift(); plan; plan = queue.shift()) reports.push(await crashAndRecover(plan, agent, workDir, server.baseUrl, options.racers ?? 0));
    });
    await Promise.all(workers);
    reports.sort((a, b) => a.runId.localeCompare(b.runId, "en", { numeric: true }));
    const report = summarize(reports);
    report.problems.push(...(await checkListRuns(workDir, [...plans.keys()])));
    return report;
  } finally {
    await server.close();
    removeDir(root);
  }
}

/** The model: one or two `mark` calls per reply until enough have succeeded, re-asking for any that were cut. */
function scriptedModel(plans: Map<string, RunPlan>, request: RecordedRequest, ordinal: number): Step {
  const messages = messagesOf(request);
  const runId = messages.map((message) => /crash-campaign run (\S+)/.exec(message.content ?? "")?.[1]).find(Boolean);
  const plan = runId ? plans.get(runId) : undefined;
  if (!plan) return reply.text("unknown run");
  plan.requests += 1;
  const succeeded = messages.filter((message) => message.role === "tool" && (message.content ?? "").includes("marked ")).length;
  const wanted = plan.marks - succeeded;
  const step = wanted <= 0
    ? reply.text(JSON.stringify({ run: plan.runId, marks: succeeded }))
    : reply.toolCalls(
      Array.from({ length: Math.min(wanted, ordinal % 2 === 0 ? 2 : 1) }, (_, k) => ({ name: "mark", arguments: { tag: `${plan.runId}.${ordinal}.${k}`, pause: "0.2" } })),
    );
  if (plan.mode === "model" && !plan.killed && plan.requests === plan.target) {
    plan.holding = true;
    return fault.delay(10_000, step);
  }
  return step;
}

async function crashAndRecover(plan: RunPlan, agent: string, workDir: string, baseUrl: string, racers: number): Promise<RunReport> {
  const env = modelEnv(baseUrl);
  const runArgs = ["run", "--agent", agent, "-w", workDir, "--run-id", plan.runId, "-m", `crash-campaign run ${plan.runId}`, "--format", "json"];
  const child = spawnDelta(runArgs, { env });
  let exited = false;
  let killed = false;
  const kill = (): void => {
    if (!exited && !killed) killed = child.kill("SIGKILL");
  };
  const done = child.finally(() => {
    exited = true;
  });
  switch (plan.mode) {
    case "model":
      await waitFor(() => plan.holding || exited, 20_000);
      break;
    case "tool":
      await waitFor(() => markerFiles(workDir, plan.runId).length >= plan.target || exited, 20_000);
      break;
    case "random":
      // Timed from the run's appearance, so a slow start-up on a busy machine does not swallow the kill.
      await waitFor(() => existsSync(runDir(workDir, plan.runId)) || exited, 20_000);
      await new Promise<void>((resolve) => setTimeout(resolve, plan.killAfterMs));
      break;
    case "claim": {
      const watcher = watch(join(workDir, ".delta"), (_event, name) => {
        if (name === plan.runId || name?.startsWith(`${STAGING_PREFIX}${plan.runId}.`)) kill();
      });
      await done.catch(() => undefined);
      watcher.close();
      break;
    }
  }
  kill();
  plan.killed = true;
  const first = await child;
  const report: RunReport = {
    runId: plan.runId, mode: plan.mode, killed: first.signal === "SIGKILL", recovery: "none", status: "UNKNOWN",
    racers: 0, refused: 0, racersKilled: 0, actionResults: 0, synthesized: 0, markerExecutions: 0, problems: [],
  };

  if (!(first.exitCode === 0 && !report.killed)) {
    if (racers > 0) {
      await raceToRecover(plan, report, workDir, env, runArgs, racers);
    } else {
      const recovered = await recover(plan, workDir, env, runArgs);
      report.recovery = recovered.how;
      if (recovered.problem) report.problems.push(recovered.problem);
    }
  }
  checkRun(report, workDir);
  return report;
}

/** What a careful script does after a crash: continue the run, or start it again if it never came to exist. */
async function recover(plan: RunPlan, workDir: string, env: Record<string, string>, runArgs: string[]): Promise<{ how: RunReport["recovery"]; problem?: string }> {
  if (existsSync(runDir(workDir, plan.runId)) && statusOf(workDir, plan.runId) === "COMPLETED") return { how: "none" };
  if (!existsSync(runDir(workDir, plan.runId))) {
    const again = await delta(runArgs, { env });
    return again.exitCode === 0 ? { how: "rerun" } : { how: "rerun", problem: `fresh run exited ${again.exitCode}: ${again.stderr.slice(-400)}` };
  }
  const resumed = await delta(["continue", "--run-id", plan.runId, "-w", workDir, "--format", "json"], { env });
  if (resumed.exitCode === 0) return { how: "continue" };
  return { how: "continue", problem: `continue exited ${resumed.exitCode}: ${resumed.stderr.slice(-400)}` };
}

const RACE_ROUNDS = 6;

/**
 * Race mode: `racers` processes recover the run at once (`continue`, or `run` with the same id when the run never came
 * to exist), and in the first round one of them may be killed too; rounds repeat until the run is COMPLETED. Of each
 * round at most one process may do the work (exit 0); every other must be refused (126) or be the one killed.
 */
async function raceToRecover(plan: RunPlan, report: RunReport, workDir: string, env: Record<string, string>, runArgs: string[], racers: number): Promise<void> {
  for (let round = 0; round < RACE_ROUNDS; round += 1) {
    const exists = existsSync(runDir(workDir, plan.runId));
    if (exists && statusOf(workDir, plan.runId) === "COMPLETED") return;
    if (report.recovery === "none") report.recovery = exists ? "continue" : "rerun";
    const args = exists ? ["continue", "--run-id", plan.runId, "-w", workDir, "--format", "json"] : runArgs;
    const children = Array.from({ length: racers }, () => spawnDelta(args, { env, timeoutMs: 60_000 }));
    report.racers += racers;
    let victim: (typeof children)[number] | null = null;
    if (round === 0 && plan.killRacerAfterMs !== null) {
      victim = children[plan.killRacerAfterMs % racers]!;
      const target = victim;
      setTimeout(() => target.kill("SIGKILL"), plan.killRacerAfterMs).unref();
    }
    const results = await Promise.all(children);
    const codes = results.map((result, index) => (children[index] === victim && result.signal === "SIGKILL" ? "killed" : result.exitCode));
    report.racersKilled += codes.filter((code) => code === "killed").length;
    report.refused += codes.filter((code) => code === 126).length;
    if (codes.filter((code) => code === 0).length > 1) report.problems.push(`round ${round + 1}: ${codes.filter((code) => code === 0).length} racers did the work (exit codes ${codes.join(", ")})`);
    const unexpected = results.filter((_, index) => codes[index] !== 0 && codes[index] !== 126 && codes[index] !== "killed");
    for (const result of unexpected) report.problems.push(`round ${round + 1}: a racer exited ${result.exitCode}: ${String(result.stderr).slice(-300)}`);
  }
  if (statusOf(workDir, plan.runId) !== "COMPLETED") report.problems.push(`not COMPLETED after ${RACE_ROUNDS} rounds of racers`);
}

function statusOf(workDir: string, runId: string): string {
  try {
    return deriveRunState(readJournal(join(runDir(workDir, runId), "journal.jsonl"))).status;
  } catch {
    return "UNREADABLE";
  }
}

function markerFiles(workDir: string, runId: string): string[] {
  try {
    return readdirSync(join(workDir, "markers")).filter((name) => name.startsWith(`${runId}.`));
  } catch {
    return [];
  }
}

/** The invariants: a valid journal, COMPLETED, one result per call, and no tool run the model did not ask for. */
function checkRun(report: RunReport, workDir: string): void {
  let events: JournalEvent[];
  try {
    events = readJournal(join(runDir(workDir, report.runId), "journal.jsonl"));
  } catch (err) {
    report.problems.push(`${INVALID} ${(err as Error).message}`);
    return;
  }
  report.status = deriveRunState(events).status;
  const completedAt = events.findIndex((event) => event.type === "ENGINE_END" && event.status === "COMPLETED");
  if (completedAt !== -1 && completedAt < events.length - 1) report.problems.push(`${DUPLICATED} the completed run was driven again (${events.length - 1 - completedAt} events after its end)`);
  if (report.status !== "COMPLETED") report.problems.push(`ended ${report.status}`);

  const requests = events.filter((event): event is EventOf<"ACTION_REQUEST"> => event.type === "ACTION_REQUEST");
  const results = events.filter((event): event is EventOf<"ACTION_RESULT"> => event.type === "ACTION_RESULT");
  report.actionResults = results.length;
  const seen = new Set<string>();
  for (const result of results) {
    if (seen.has(result.action_id)) report.problems.push(`${DUPLICATED} ACTION_RESULT recorded twice for ${result.action_id}`);
    seen.add(result.action_id);
  }
  for (const request of requests) {
    if (!seen.has(request.action_id)) report.problems.push(`ACTION_REQUEST ${request.action_id} has no ACTION_RESULT`);
  }

  const executions = new Map<string, number>();
  for (const name of markerFiles(workDir, report.runId)) {
    executions.set(name, readFileSync(join(workDir, "markers", name), "utf8").split("\n").filter(Boolean).length);
  }
  report.markerExecutions = [...executions.values()].reduce((sum, count) => sum + count, 0);
  const tagOf = new Map(requests.map((request) => [request.action_id, String((request.tool_args as { tag?: unknown }).tag)]));
  const requestedTags = new Set(tagOf.values());
  for (const [tag, count] of executions) {
    if (count > 1) report.problems.push(`${DUPLICATED} tool call ${tag} ran ${count} times`);
    if (!requestedTags.has(tag)) report.problems.push(`tool call ${tag} ran without an ACTION_REQUEST`);
  }
  let synthesizedWithMarker = 0;
  for (const result of results) {
    const ran = executions.get(tagOf.get(result.action_id) ?? "") ?? 0;
    if (result.observation_content.includes(SYNTHESIZED)) {
      report.synthesized += 1;
      synthesizedWithMarker += ran;
    } else if (ran !== 1) {
      report.problems.push(`${result.action_id} has a real result but its tool ran ${ran} times`);
    }
  }
  const realResults = results.length - report.synthesized;
  if (report.markerExecutions !== realResults + synthesizedWithMarker) {
    report.problems.push(`${report.markerExecutions} tool executions for ${realResults} real results and ${synthesizedWithMarker} cut ones that had started`);
  }
}

/** `list-runs` must still read the workspace, whatever the kills left behind, and see every run COMPLETED. */
async function checkListRuns(workDir: string, runIds: string[]): Promise<string[]> {
  const listed = await delta(["list-runs", "-w", workDir, "--format", "json"]);
  if (listed.exitCode !== 0) return [`list-runs exited ${listed.exitCode}: ${listed.stderr.slice(-400)}`];
  const runs = JSON.parse(listed.stdout) as { run_id: string; status: string }[];
  const problems: string[] = [];
  const seen = new Map(runs.map((run) => [run.run_id, run.status]));
  for (const runId of runIds) {
    if (seen.get(runId) !== "COMPLETED") problems.push(`list-runs shows ${runId} as ${seen.get(runId) ?? "missing"}`);
  }
  if (runs.length !== runIds.length) problems.push(`list-runs shows ${runs.length} runs for ${runIds.length}`);
  return problems;
}

function summarize(runs: RunReport[]): CampaignReport {
  const killed = runs.filter((run) => run.killed);
  const lost = runs.filter((run) => run.status !== "COMPLETED");
  const runsWith = (prefix: string): number => runs.filter((run) => run.problems.some((problem) => problem.startsWith(prefix))).length;
  return {
    runs,
    killed: killed.length,
    recovered: killed.filter((run) => run.status === "COMPLETED").length,
    lost: lost.length,
    invalidJournals: runsWith(INVALID),
    duplicated: runsWith(DUPLICATED),
    racers: runs.reduce((sum, run) => sum + run.racers, 0),
    refused: runs.reduce((sum, run) => sum + run.refused, 0),
    racersKilled: runs.reduce((sum, run) => sum + run.racersKilled, 0),
    synthesized: runs.reduce((sum, run) => sum + run.synthesized, 0),
    markerExecutions: runs.reduce((sum, run) => sum + run.markerExecutions, 0),
    nonSynthesizedMarkResults: runs.reduce((sum, run) => sum + run.actionResults - run.synthesized, 0),
    problems: runs.flatMap((run) => run.problems.map((problem) => `${run.runId} (${run.mode}): ${problem}`)),
  };
}
