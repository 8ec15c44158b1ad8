// The map-reduce example: fan out one run per item (xargs -P, GNU parallel, parallel --sshlogin to two hosts), collect every RunResult, reduce them; a killed fan-out or host loses nothing.
import { execa } from "execa";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startHosts, type Hosts } from "../../support/hosts.js";
import { fault, type MockLlm, reply, startMockLlm, taskOf, toolResultsOf } from "../../support/mock-llm.js";
import { multihostUnsupportedReason } from "../../support/multihost-preflight.js";
import { requireBinary } from "../../support/system-packages.js";
import { STAGING_PREFIX } from "../../../src/store/run-dir.js";
import { DELTA_BIN, modelEnv, NO_MODEL_KEYS, removeDir, tempDir, waitFor } from "../../e2e/harness.js";
import { EXAMPLES, binDir, pathWith, runScript } from "../../examples/helpers.js";

const SCRIPT = join(EXAMPLES, "map-reduce/map-reduce.sh");

let root: string;
let server: MockLlm;
let path: string;
/** Items whose first model call gets a 400 until a test clears this. */
const failing = new Set<string>();
/** Items whose model replies come this late (ms), so a fan-out can be killed while they are in flight. */
const slow = new Map<string, number>();

beforeAll(async () => {
  // The scripts collect results with jq and fan out with GNU parallel: without them every test fails naming the package.
  requireBinary("jq");
  requireBinary("parallel");
  root = tempDir("delta-mapreduce-");
  path = pathWith(binDir(root));
  // A mapper counts with its tool and answers {"words": n}; the reducer sums with its tool and answers what it printed.
  server = await startMockLlm((request) => {
    const task = taskOf(request);
    const results = toolResultsOf(request);
    const item = /Text: (.*)$/.exec(task)?.[1];
    if (item !== undefined) {
      if (results.length === 0 && failing.has(item)) return fault.status(400, { message: "rejected on purpose" });
      // No count yet, or the engine was killed while counting ("may or may not have taken effect"): count (again).
      const count = /^\s*(\d+)\s*$/.exec(results.at(-1) ?? "")?.[1];
      const step = count === undefined ? reply.toolCalls([{ name: "count_words", arguments: { text: item } }]) : reply.text(JSON.stringify({ words: Number(count) }));
      return slow.has(item) ? fault.delay(slow.get(item)!, step) : step;
    }
    const file = /results file (\S+\.jsonl)/.exec(task)?.[1] ?? "missing";
    return results.length === 0 ? reply.toolCalls([{ name: "sum_words", arguments: { file } }]) : reply.text(results[0]!.trim());
  });
});
afterAll(async () => {
  await server.close();
  removeDir(root);
});

/** Item i has i+1 words, so the expected total is known without trusting any counter. */
function writeItems(name: string, count: number): { file: string; items: string[] } {
  const items = Array.from({ length: count }, (_, i) => Array.from({ length: i + 1 }, (_, w) => `${name}${i}w${w}`).join(" "));
  const file = join(root, `${name}.txt`);
  writeFileSync(file, `${items.join("\n")}\n\n`);
  return { file, items };
}

function jsonLines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function mapReduce(name: string, count: number, runner: "xargs" | "parallel") {
  const { file, items } = writeItems(name, count);
  const ws = join(root, `ws-${name}`);
  const out = join(root, `out-${name}`);
  const result = await runScript(SCRIPT, ["-i", file, "-w", ws, "-o", out, "-P", "4", "-r", runner], { cwd: root, env: { ...modelEnv(server.baseUrl), PATH: path } });
  return { result, items, out, rerun: () => runScript(SCRIPT, ["-i", file, "-w", ws, "-o", out, "-P", "4", "-r", runner], { cwd: root, env: { ...modelEnv(server.baseUrl), PATH: path } }) };
}

function expectAllCollected(out: string, items: string[]): void {
  const results = jsonLines(join(out, "results.jsonl"));
  expect(results).toHaveLength(items.length);
  expect(results.map((r) => r.run_id)).toEqual(items.map((_, i) => `map-${i}`));
  expect(results.map((r) => r.item)).toEqual(items);
  expect(results.map((r) => r.result)).toEqual(items.map((_, i) => ({ words: i + 1 })));
  expect(jsonLines(join(out, "failures.jsonl"))).toEqual([]);
}

/** Exit 0, every item in the reduce once, and no run completed twice (one COMPLETED end in each journal). */
function expectEveryItemOnce(result: { exitCode: number; stdout: string; stderr: string }, ws: string, out: string, items: string[]): void {
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stderr).toContain(`map: ${items.length} completed, 0 failed`);
  expectAllCollected(out, items);
  expect(JSON.parse(result.stdout)).toEqual({ items: items.length, total_words: (items.length * (items.length + 1)) / 2 });
  for (const [index] of items.entries()) {
    const journal = readFileSync(join(ws, ".delta", `map-${index}`, "journal.jsonl"), "utf8");
    expect(journal.match(/"type":"ENGINE_END","run_id":"[^"]+","status":"COMPLETED"/g), `map-${index}`).toHaveLength(1);
  }
}

// Generous limits: each test spawns tens of engines, and CI machines may be busy.
describe.concurrent("examples/map-reduce/map-reduce.sh", { timeout: 120_000 }, () => {
  it("runs without a key on the shipped items and recordings (-x): every item counted, the reduce totals 9", async () => {
    const out = join(root, "out-recorded");
    const result = await runScript(SCRIPT, ["-i", join(EXAMPLES, "map-reduce/items.txt"), "-w", join(root, "ws-recorded"), "-o", out, "-x", join(EXAMPLES, "map-reduce/recording")], { cwd: root, env: { PATH: path } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ items: 3, total_words: 9 });
    expect(jsonLines(join(out, "results.jsonl")).map((r) => [r.item, r.result])).toEqual([
      ["the quick brown fox", { words: 4 }],
      ["jumps over", { words: 2 }],
      ["the lazy dog", { words: 3 }],
    ]);
    // The map tool really ran on each item: its observation is wc's count.
    expect(readFileSync(join(root, "ws-recorded/.delta/map-1/journal.jsonl"), "utf8")).toMatch(/"observation_content":"2\\n"/);
  });

  it("maps 20 items with xargs -P: 20 results, none lost, and the reduce totals them", async () => {
    const { result, items, out } = await mapReduce("xargs", 20, "xargs");
    expect(result.stderr).toContain("map: 20 completed, 0 failed");
    expect(result.exitCode).toBe(0);
    expectAllCollected(out, items);
    expect(JSON.parse(result.stdout)).toEqual({ items: 20, total_words: (20 * 21) / 2 });
  });

  // Fewer items: the fan-out logic is the same as above, only the runner differs.
  it("maps items with GNU parallel the same way", async () => {
    const { result, items, out } = await mapReduce("parallel", 3, "parallel");
    expect(result.exitCode).toBe(0);
    expectAllCollected(out, items);
    expect(JSON.parse(result.stdout)).toEqual({ items: 3, total_words: 6 });
  });

  it("reports a failed item without losing it, reduces the rest, and a rerun finishes only what failed", async () => {
    const { items } = writeItems("failing", 3);
    failing.add(items[1]!);
    const first = await mapReduce("failing", 3, "xargs");
    expect(first.result.exitCode).toBe(1);
    expect(first.result.stderr).toContain("FAILED map-1 (FAILED, exit 1)");
    expect(jsonLines(join(first.out, "failures.jsonl"))).toEqual([
      expect.objectContaining({ item: items[1], run_id: "map-1", status: "FAILED", exit_code: 1, error: expect.objectContaining({ message: expect.stringContaining("rejected on purpose") }) }),
    ]);
    expect(jsonLines(join(first.out, "results.jsonl")).map((r) => r.run_id)).toEqual(["map-0", "map-2"]);
    expect(JSON.parse(first.result.stdout)).toEqual({ items: 2, total_words: 1 + 3 });

    failing.clear();
    const again = await first.rerun();
    expect(again.exitCode).toBe(0);
    expectAllCollected(first.out, items);
    expect(JSON.parse(again.stdout)).toEqual({ items: 3, total_words: 6 });
    // The rerun continued the failed run (a second ENGINE_START in its journal) and left the others alone.
    expect(readFileSync(join(root, "ws-failing/.delta/map-1/journal.jsonl"), "utf8").match(/"type":"ENGINE_START"/g)).toHaveLength(2);
    expect(readFileSync(join(root, "ws-failing/.delta/map-0/journal.jsonl"), "utf8").match(/"type":"ENGINE_START"/g)).toHaveLength(1);

    // Results are matched to items by index, so a different item list for the same out dir is refused.
    const other = join(root, "other-items.txt");
    writeFileSync(other, "something else\n");
    const mixed = await runScript(SCRIPT, ["-i", other, "-w", join(root, "ws-failing"), "-o", first.out], { cwd: root, env: { ...modelEnv(server.baseUrl), PATH: path } });
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toContain("holds the results of a different item list");
    expect(jsonLines(join(first.out, "results.jsonl"))).toHaveLength(3);
  });

  it("loses nothing to a kill -9 of the whole fan-out mid-way: run again, every item is in the reduce exactly once", async () => {
    const { file, items } = writeItems("killed", 16);
    for (const item of items) slow.set(item, 150);
    const ws = join(root, "ws-killed");
    const out = join(root, "out-killed");
    const args = ["-i", file, "-w", ws, "-o", out, "-P", "4"];
    const env = { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl), PATH: path };
    // Its own process group, so one kill reaches the script, xargs, every worker, engine and tool at once.
    const fanOut = execa("bash", [SCRIPT, ...args], { cwd: root, env, detached: true, reject: false, stdin: "ignore" });
    const results = (): string[] => (existsSync(out) ? readdirSync(out).filter((name) => /^map-\d+\.json$/.test(name)) : []);
    const started = (): string[] => (existsSync(join(ws, ".delta")) ? readdirSync(join(ws, ".delta")).filter((name) => name.startsWith("map-")) : []);
    await waitFor(() => results().length >= 4 && started().length >= results().length + 3, 60_000, "some items done and others in flight");
    process.kill(-fanOut.pid!, "SIGKILL");
    await fanOut;
    for (const item of items) slow.delete(item);
    const killedMidRun = started().filter((id) => !readFileSync(join(ws, ".delta", id, "journal.jsonl"), "utf8").includes('"type":"ENGINE_END"'));
    expect(results().length).toBeLessThan(items.length);
    expect(killedMidRun.length).toBeGreaterThan(0);

    const again = await runScript(SCRIPT, args, { cwd: root, env: { ...modelEnv(server.baseUrl), PATH: path } });
    expectEveryItemOnce(again, ws, out, items);
    // Each run the kill interrupted was recovered where it stood.
    for (const id of killedMidRun) expect(readFileSync(join(ws, ".delta", id, "journal.jsonl"), "utf8")).toContain('"error_type":"ORPHANED_RUN"');
  });

  it("never takes an empty RunResult file for a done item (jq 1.6 says yes to `jq -e` of an empty file)", async () => {
    const { file, items } = writeItems("empty", 2);
    const out = join(root, "out-empty");
    mkdirSync(out);
    // What a worker killed while delta wrote its stdout used to leave behind.
    writeFileSync(join(out, "map-0.json"), "");
    const result = await runScript(SCRIPT, ["-i", file, "-w", join(root, "ws-empty"), "-o", out], { cwd: root, env: { ...modelEnv(server.baseUrl), PATH: path } });
    expect(result.exitCode, result.stderr).toBe(0);
    expectAllCollected(out, items);
  });

  it("collects a completed run whose RunResult was lost from its journal, without asking the model again", async () => {
    const { items, out, rerun } = await mapReduce("lost-result", 3, "xargs");
    rmSync(join(out, "map-1.json"));
    const calls = server.requests.filter((request) => taskOf(request).endsWith(items[1]!)).length;
    const again = await rerun();
    expect(again.exitCode, again.stderr).toBe(0);
    expectAllCollected(out, items);
    expect(JSON.parse(readFileSync(join(out, "map-1.json"), "utf8"))).toMatchObject({ schema_version: "2.0", run_id: "map-1", status: "COMPLETED", result: { words: 2 }, metrics: { iterations: expect.any(Number) } });
    expect(server.requests.filter((request) => taskOf(request).endsWith(items[1]!)).length).toBe(calls);
  });

  for (const runner of ["xargs", "parallel"] as const) {
    it(`fails the item of a worker that died, not the script: ${runner}'s exit count never ends it early`, async () => {
      const { file, items } = writeItems(`lost-worker-${runner}`, 3);
      const out = join(root, `out-lost-worker-${runner}`);
      // A delta that dies (as a killed worker does) for item 1 only.
      const wrapper = join(root, `delta-dies-on-1-${runner}`);
      writeFileSync(wrapper, `#!/bin/sh\ncase " $* " in *" --run-id map-1 "*) kill -9 $$ ;; esac\nexec delta "$@"\n`);
      chmodSync(wrapper, 0o755);
      const result = await runScript(SCRIPT, ["-i", file, "-w", join(root, `ws-lost-worker-${runner}`), "-o", out, "-r", runner], { cwd: root, env: { ...modelEnv(server.baseUrl), PATH: path, DELTA: wrapper } });
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`map: ${runner} exited [1-9][0-9]*: some workers were lost`));
      expect(result.stderr).toContain("map: 2 completed, 1 failed");
      expect(jsonLines(join(out, "failures.jsonl"))).toEqual([expect.objectContaining({ item: items[1], run_id: "map-1", status: "NO_RESULT" })]);
      expect(JSON.parse(result.stdout)).toEqual({ items: 2, total_words: 1 + 3 });
    });
  }
});

describe("examples/map-reduce/map-reduce.sh over GNU parallel --sshlogin to two hosts", { timeout: 180_000 }, () => {
  let hosts: Hosts | undefined;
  let unsupported: string | null = null;
  beforeAll(async () => {
    unsupported = await multihostUnsupportedReason(["hosts", "parallel"]);
    if (!unsupported) hosts = await startHosts({ count: 2 });
  }, 120_000); // booting hosts takes seconds, more on a busy machine
  // Where hosts cannot be made here, the test fails with the reason; it is never skipped.
  beforeEach(() => {
    if (unsupported) throw new Error(unsupported);
  });
  afterAll(async () => {
    await hosts?.close();
  });

  it("loses nothing when one host dies mid-way: its items are retried on the other, which takes their runs over; every item once, exit 0", async () => {
    const [hostA, hostB] = hosts!.hosts;
    const { file, items } = writeItems("hosts", 8);
    for (const item of items) slow.set(item, 400);
    const ws = join(root, "ws-hosts");
    const out = join(root, "out-hosts");
    const env = {
      ...modelEnv(server.baseUrl),
      ...hosts!.parallelEnv,
      PATH: path,
      // The workers run on the hosts: parallel passes them delta's path and the model settings; short beats make a dead holder quick to judge.
      DELTA: DELTA_BIN,
      DELTA_HEARTBEAT_MS: "300",
      PARALLEL_SSH: hosts!.sshCommand,
      PARALLEL: `--sshlogin ${hostA!.name},${hostB!.name} --env DELTA --env DELTA_API_KEY --env DELTA_BASE_URL --env DELTA_RETRY_BASE_MS --env DELTA_HEARTBEAT_MS`,
    };
    const fanOut = runScript(SCRIPT, ["-i", file, "-w", ws, "-o", out, "-P", "2", "-r", "parallel"], { cwd: root, env, timeoutMs: 170_000 });
    // A run the dead host was still claiming is a hidden .claim-* folder, not a run (store/run-dir.ts): nothing takes
    // it over, and the item's retry claims the run afresh. Only published runs count.
    const holders = (host: string): string[] =>
      (existsSync(join(ws, ".delta")) ? readdirSync(join(ws, ".delta")) : []).filter((id) => {
        if (id.startsWith(STAGING_PREFIX)) return false;
        const lock = join(ws, ".delta", id, ".lock", "1.json");
        const journal = join(ws, ".delta", id, "journal.jsonl");
        return existsSync(lock) && readFileSync(lock, "utf8").includes(`"hostname":"${host}"`) && existsSync(journal) && !readFileSync(journal, "utf8").includes('"type":"ENGINE_END"');
      });
    const done = (): number => (existsSync(out) ? readdirSync(out).filter((name) => /^map-\d+\.json$/.test(name)).length : 0);
    await waitFor(() => done() >= 1 && holders(hostB!.hostname).length >= 1, 60_000, "an item done and a run in flight on hostB");
    await hostB!.kill();
    // Read once hostB is gone, not before: a run can still end in the moment between a look and the kill. Nothing
    // takes these runs over sooner than a stale period (five 300 ms beats) after the kill.
    const stranded = holders(hostB!.hostname);
    const result = await fanOut;
    for (const item of items) slow.delete(item);

    expectEveryItemOnce(result, ws, out, items);
    // Each run the dead host held was taken over on hostA, with hostB named as the old owner.
    for (const id of stranded) {
      expect(readFileSync(join(ws, ".delta", id, "journal.jsonl"), "utf8"), id).toMatch(/"error_type":"ORPHANED_RUN","error_message":"\[Janitor\] The engine process \(pid \d+ on host 'hostB'/);
    }
  });
});
