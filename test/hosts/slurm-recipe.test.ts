// The Slurm recipe (examples/slurm) on a real two-node Slurm: a job array with one task cancelled and one whose node dies, then the documented resumption.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { JournalEventSchema, type JournalEvent } from "../../src/journal/events.js";
import { binDir, EXAMPLES, pathWith, runScript } from "../examples/helpers.js";
import { fault, type MockLlm, reply, startMockLlm, taskOf, toolResultsOf } from "../support/mock-llm.js";
import { multihostUnsupportedReason } from "../support/multihost-preflight.js";
import { findBinary, missingProgramsMessage } from "../support/system-packages.js";
import { isFinished, type SlurmCluster, type SlurmJob, startSlurm } from "../support/slurm.js";
import { modelEnv, removeDir, runDir, tempDir, waitFor } from "../e2e/harness.js";

const SCRIPT = join(EXAMPLES, "slurm/slurm-map.sh");
const MAP_AGENT = join(EXAMPLES, "map-reduce/map-agent");
const COUNT = 6;
/** Item i has i + 1 words, so every count is known without trusting a counter. */
const ITEMS = Array.from({ length: COUNT }, (_, i) => Array.from({ length: i + 1 }, (_, w) => `s${i}w${w}`).join(" "));
/** The task to cancel and the task whose node is killed: each holds its second model call until then. */
const CANCELLED = 1;
const STRANDED = 2;

let unsupported: string | null = null;
let root: string;
let cluster: SlurmCluster | undefined;
let server: MockLlm;
/** Second model calls (after the tool's result) per item, so a held item answers only its later attempts. */
const answerCalls = new Map<string, number>();

beforeAll(async () => {
  unsupported = (await multihostUnsupportedReason(["slurm"])) ?? (findBinary("jq") ? null : missingProgramsMessage(["jq"]));
  root = tempDir("delta-slurm-recipe-");
  server = await startMockLlm((request) => {
    const item = /Text: (.*)$/.exec(taskOf(request))?.[1] ?? "";
    const results = toolResultsOf(request);
    if (results.length === 0) return reply.toolCalls([{ name: "count_words", arguments: { text: item } }]);
    const calls = (answerCalls.get(item) ?? 0) + 1;
    answerCalls.set(item, calls);
    const held = item === ITEMS[CANCELLED] || item === ITEMS[STRANDED];
    return held && calls === 1 ? fault.hang() : reply.text(JSON.stringify({ words: Number(/\d+/.exec(results[0]!)?.[0]) }));
  });
  if (!unsupported) cluster = await startSlurm({ slurmdTimeoutSeconds: 5, requeueDelaySeconds: 5 });
}, 60_000);
beforeEach(() => {
  if (unsupported) throw new Error(unsupported);
});
afterAll(async () => {
  await cluster?.close();
  await server?.close();
  if (root) removeDir(root);
});

const task = (jobs: SlurmJob[], index: number): SlurmJob | undefined => jobs.find((job) => job.arrayTaskId === String(index));

/** The journal's last complete event, or undefined while it has none. */
function lastEvent(ws: string, runId: string): Record<string, unknown> | undefined {
  const lines = readFileSync(join(runDir(ws, runId), "journal.jsonl"), "utf8").split("\n").slice(0, -1);
  return lines.length > 0 ? (JSON.parse(lines.at(-1)!) as Record<string, unknown>) : undefined;
}

/** Every line parses as a journal event of the engine's schema, seq counts 1…n without a gap, and the run starts once. */
function validJournal(ws: string, runId: string): JournalEvent[] {
  const lines = readFileSync(join(runDir(ws, runId), "journal.jsonl"), "utf8").split("\n");
  expect(lines.at(-1)).toBe("");
  const events = lines.slice(0, -1).map((line) => JournalEventSchema.parse(JSON.parse(line)));
  expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events[0]!.type).toBe("ENGINE_START");
  return events;
}

it("loses no item to a cancelled task or a dead node: after the documented resumption every item completed exactly once", { timeout: 240_000 }, async () => {
  const items = join(root, "items.txt");
  writeFileSync(items, `${ITEMS.join("\n")}\n`);
  const ws = join(root, "ws");
  const out = join(root, "out");
  const env = { ...modelEnv(server.baseUrl), ...cluster!.env, PATH: pathWith(binDir(root)) };
  const script = (args: string[]) => runScript(SCRIPT, args, { cwd: root, env, timeoutMs: 60_000 });

  const submitted = await script(["submit", "-i", items, "-w", ws, "-o", out, "-m", MAP_AGENT]);
  expect(submitted.exitCode, submitted.stderr).toBe(0);
  const job = submitted.stdout.trim();
  expect(job).toMatch(/^\d+$/);

  // Both held tasks are mid-run: their engines wait for the model's answer.
  await waitFor(() => answerCalls.get(ITEMS[CANCELLED]!) === 1 && answerCalls.get(ITEMS[STRANDED]!) === 1, 60_000, "the two held tasks waiting for the model");
  // The other tasks finish first, so the node dies with only the held task on it.
  const others = ITEMS.map((_, i) => i).filter((i) => i !== CANCELLED && i !== STRANDED);
  await cluster!.waitForJobs(job, (jobs) => others.every((i) => task(jobs, i)?.state === "COMPLETED"), 60_000, "the other tasks completed");
  expect((await cluster!.run("scancel", [`${job}_${CANCELLED}`])).exitCode).toBe(0);
  const afterCancel = await cluster!.waitForJobs(job, (jobs) => task(jobs, CANCELLED)?.state === "CANCELLED", 30_000, "the task cancelled");
  // Slurm's SIGTERM reached the engine, which recorded the run INTERRUPTED before its KillWait ran out.
  await waitFor(() => lastEvent(ws, `map-${CANCELLED}`)?.status === "INTERRUPTED", 15_000, "the cancelled run INTERRUPTED");
  const node = cluster!.nodes.find((candidate) => candidate.name === task(afterCancel, STRANDED)!.nodeList)!;
  const survivor = cluster!.nodes.find((candidate) => candidate !== node)!;
  await node.kill();
  await cluster!.waitForNodeState(node.name, /^down/, 30_000);

  // Slurm requeues the dead node's task onto the other node; its `continue` takes the run from the dead engine.
  const ended = await cluster!.waitForJobs(job, (jobs) => jobs.length === COUNT && jobs.every(isFinished), 120_000, "every task of the array ended");
  expect(Object.fromEntries(ended.map((found) => [found.arrayTaskId, found.state]))).toEqual(
    Object.fromEntries(ITEMS.map((_, i) => [String(i), i === CANCELLED ? "CANCELLED" : "COMPLETED"])),
  );
  expect(task(ended, STRANDED)).toMatchObject({ restarts: 1, nodeList: survivor.name });
  const takeover = validJournal(ws, `map-${STRANDED}`).find((event) => event.type === "ERROR");
  expect(takeover).toMatchObject({ error_type: "ORPHANED_RUN", error_details: { previous_owner: { hostname: node.name } } });

  // The documented resumption: the cancelled item is resubmitted as a new array of one task, then nothing is left.
  const resumed = await script(["resume", "-o", out]);
  expect(resumed.exitCode, resumed.stderr).toBe(3);
  expect(resumed.stderr).toContain(`${COUNT - 1} of ${COUNT} items completed`);
  const again = resumed.stdout.trim();
  expect(again).toMatch(/^\d+$/);
  const rerun = await cluster!.waitForJobs(again, (jobs) => jobs.every(isFinished), 60_000, "the resubmitted array ended");
  expect(rerun.map((found) => [found.arrayTaskId, found.state])).toEqual([[String(CANCELLED), "COMPLETED"]]);

  const finished = await script(["resume", "-o", out]);
  expect(finished.exitCode, finished.stderr).toBe(0);
  expect(finished.stdout).toBe("");
  const results = readFileSync(join(out, "results.jsonl"), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(results).toEqual(ITEMS.map((item, i) => ({ item, run_id: `map-${i}`, result: { words: i + 1 } })));
  expect(readFileSync(join(out, "remaining.jsonl"), "utf8")).toBe("");
  // Only whole RunResults were renamed into place; a killed attempt's temp file is all it may leave.
  expect(readdirSync(out).filter((file) => /^map-\d+\.json$/.test(file))).toHaveLength(COUNT);

  for (let i = 0; i < COUNT; i += 1) {
    const events = validJournal(ws, `map-${i}`);
    const types = events.map((event) => event.type);
    // One task, one tool call that ran once, one completion; the interrupted runs were resumed, never started again.
    expect(types.filter((type) => type === "USER_MESSAGE"), `map-${i}`).toHaveLength(1);
    expect(events.filter((event) => event.type === "ACTION_RESULT" && event.status === "SUCCESS"), `map-${i}`).toHaveLength(1);
    expect(events.filter((event) => event.type === "ENGINE_END" && event.status === "COMPLETED"), `map-${i}`).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
    expect(types.filter((type) => type === "ENGINE_START"), `map-${i}`).toHaveLength(i === CANCELLED || i === STRANDED ? 2 : 1);
  }
});
