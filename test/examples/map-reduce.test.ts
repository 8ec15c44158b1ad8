// The map-reduce example: fan out one run per item (xargs -P or GNU parallel), collect every RunResult, reduce them.
import { execaSync } from "execa";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fault, type MockLlm, reply, startMockLlm, taskOf, toolResultsOf } from "../support/mock-llm.js";
import { modelEnv, removeDir, tempDir } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith, runScript } from "./helpers.js";

const SCRIPT = join(EXAMPLES, "map-reduce/map-reduce.sh");
const hasParallel = execaSync("sh", ["-c", "command -v parallel"], { reject: false }).exitCode === 0;

let root: string;
let server: MockLlm;
let path: string;
/** Items whose first model call gets a 400 until a test clears this. */
const failing = new Set<string>();

beforeAll(async () => {
  root = tempDir("delta-mapreduce-");
  path = pathWith(binDir(root));
  // A mapper counts with its tool and answers {"words": n}; the reducer sums with its tool and answers what it printed.
  server = await startMockLlm((request) => {
    const task = taskOf(request);
    const results = toolResultsOf(request);
    const item = /Text: (.*)$/.exec(task)?.[1];
    if (item !== undefined) {
      if (results.length === 0) return failing.has(item) ? fault.status(400, { message: "rejected on purpose" }) : reply.toolCalls([{ name: "count_words", arguments: { text: item } }]);
      return reply.text(JSON.stringify({ words: Number(/\d+/.exec(results[0]!)?.[0]) }));
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
  it.skipIf(!hasParallel)("maps items with GNU parallel the same way", async () => {
    const { result, items, out } = await mapReduce("parallel", 3, "parallel");
    expect(result.exitCode).toBe(0);
    expectAllCollected(out, items);
    expect(JSON.parse(result.stdout)).toEqual({ items: 3, total_words: 6 });
  });
  if (!hasParallel) console.warn("[map-reduce test] GNU parallel path skipped: `parallel` is not installed (apt-get install parallel)");

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
});
