// The workspace report keeps a row per run, not a run's iterations: forty long runs, whose accounts together would
// outgrow the heap the report is given, each fold to their row before the next run is read.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { writeLongRun } from "../support/long-run-journal.js";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, runDir, writeAgent, setUpE2e } from "./harness.js";

const RUNS = 40;
const ITERATIONS = 2_000;
const HEAP_MB = 24;

const { root, serve } = setUpE2e();
let server: MockLlm;
let ws: string;

beforeAll(async () => {
  server = await serve(() => reply.text("done"));
  ws = join(root, "ws");
  const run = await delta(["run", "--agent", writeAgent(root), "-w", ws, "--run-id", "first", "-m", "go"], { env: modelEnv(server.baseUrl) });
  expect(run.exitCode, run.stderr).toBe(0);
  const [start, message] = readEvents(ws, "first") as [JournalEvent, JournalEvent];
  const metadata = JSON.parse(readFileSync(join(runDir(ws, "first"), "metadata.json"), "utf8")) as Record<string, unknown>;
  for (let n = 1; n <= RUNS; n += 1) {
    const runId = `long-${n}`;
    cpSync(runDir(ws, "first"), runDir(ws, runId), { recursive: true });
    writeFileSync(join(runDir(ws, runId), "metadata.json"), JSON.stringify({ ...metadata, run_id: runId }));
    writeLongRun(join(runDir(ws, runId), "journal.jsonl"), [{ ...start, run_id: runId } as JournalEvent, message], ITERATIONS, 64);
  }
}, 120_000);

it("reports forty runs of 2,000 iterations each under a small heap, a row per run with its iterations counted", async () => {
  const file = join(root, "runs.html");
  const reported = await delta(["report", "-w", ws, "-o", file], { env: modelEnv(server.baseUrl, { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` }), timeoutMs: 120_000 });
  expect(reported.exitCode, reported.stderr.slice(-2000)).toBe(0);
  const page = readFileSync(file, "utf8");
  for (let n = 1; n <= RUNS; n += 1) expect(page).toMatch(new RegExp(`<tr class="run" data-run="long-${n}">.*\\n<td class="num" data-label="iterations">${ITERATIONS}</td>`));
  expect(page).toContain(`<span>runs <b>${RUNS + 1}</b></span>`);
  expect(page.trimEnd().endsWith("</html>")).toBe(true);
}, 180_000);
