// examples/compaction: a computed_file generator runs a summariser agent on the iterations the window dropped, and caches each summary by its range.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { delta, modelEnv, readEvents, runDir, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith } from "./helpers.js";
import { messagesOf, reply, startMockLlm, type MockLlm, type RecordedRequest, type Step } from "../support/mock-llm.js";
import { recordingAsScript } from "./recording.js";

const AGENT = join(EXAMPLES, "compaction");
const TASK = "Which cache is cheaper?";

const { root } = setUpE2e("delta-compaction-");
let path: string;
beforeAll(() => {
  path = pathWith(binDir(root));
});

/** The summariser's runs, one directory each. */
function summariserRuns(ws: string, runId: string): string[] {
  return readdirSync(join(runDir(ws, runId), "summariser", ".delta"), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

it("runs without a key: the worker replays recording.jsonl, the summariser (a real delta run) replays SUMMARISER_REPLAY", async () => {
  const ws = join(root, "ws-replayed");
  const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "replayed", "--replay", join(AGENT, "recording.jsonl"), "--format", "json", "-m", TASK], {
    env: { PATH: path, SUMMARISER_REPLAY: join(AGENT, "summariser", "recording.jsonl") },
    timeoutMs: 60_000,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", metrics: { iterations: 9 } });
  // Two jumps of the window (before calls 6 and 9): two ranges, two summariser runs.
  expect(readdirSync(join(runDir(ws, "replayed"), "summaries")).filter((name) => name.endsWith(".md") && !name.startsWith("task")).sort()).toEqual(["1-3.md", "1-6.md"]);
  expect(summariserRuns(ws, "replayed")).toHaveLength(2);
  expect(readFileSync(join(ws, ".delta", "context_artifacts", "summary.md"), "utf8")).toContain("## Summary of iterations 1–6");
});

let server: MockLlm;
afterAll(async () => server?.close());

it("sends the summariser the dropped iterations, builds on the last summary, and shows the summary until the next jump", async () => {
  const worker = recordingAsScript(join(AGENT, "recording.jsonl"));
  const summaries = ["first summary: caches A and B compared", "second summary: A saves 72%, B 41%"];
  const summariser: Step[] = summaries.map((text) => reply.text(text));
  // One server for both agents: a request offering the `note` tool is the worker's.
  server = await startMockLlm((request: RecordedRequest) => {
    const tools = (request.body as { tools?: { function: { name: string } }[] }).tools ?? [];
    return (tools.some((tool) => tool.function.name === "note") ? worker : summariser).shift() ?? reply.text("script exhausted");
  });
  const ws = join(root, "ws-live");
  const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "live", "--format", "json", "-m", TASK], { env: modelEnv(server.baseUrl, { PATH: path }), timeoutMs: 60_000 });
  expect(run.exitCode, run.stderr).toBe(0);

  const isWorker = (request: RecordedRequest) => ((request.body as { tools?: { function: { name: string } }[] }).tools ?? []).some((tool) => tool.function.name === "note");
  const workerCalls = server.requests.filter(isWorker).map(messagesOf);
  const summariserCalls = server.requests.filter((request) => !isWorker(request)).map(messagesOf);
  expect(workerCalls).toHaveLength(9);
  expect(summariserCalls).toHaveLength(2);
  const taskOf = (messages: ReturnType<typeof messagesOf>) => messages.find((m) => m.role === "user")?.content ?? "";
  // The first summary covers iterations 1–3; the second builds on it with 4–6 only.
  expect(taskOf(summariserCalls[0]!)).toContain("iteration 3: note");
  expect(taskOf(summariserCalls[0]!)).not.toContain("summary so far");
  expect(taskOf(summariserCalls[1]!)).toContain(`The summary so far, of iterations 1–3:\n\n${summaries[0]}`);
  expect(taskOf(summariserCalls[1]!)).not.toContain("iteration 3: note");
  expect(taskOf(summariserCalls[1]!)).toContain("iteration 6: note");

  const summaryBlock = (call: number) => workerCalls[call - 1]!.find((m) => m.role === "system" && m.content?.startsWith("# Context Block: summary"))?.content;
  expect(summaryBlock(5)).toBeUndefined();
  for (const call of [6, 7, 8]) expect(summaryBlock(call)).toContain(summaries[0]);
  expect(summaryBlock(9)).toContain(summaries[1]);
  expect(readEvents(ws, "live").filter((event) => event.type === "CONTEXT_WINDOW").map((event) => event.type === "CONTEXT_WINDOW" && event.first_iteration)).toEqual([4, 7]);

  // Run again for the same window (a resume, a replay): the cached summary, no summariser run.
  const before = summariserRuns(ws, "live").length;
  const output = join(root, "again.md");
  execFileSync(process.execPath, [join(AGENT, "tools", "compact.mjs"), output], {
    env: { PATH: path, JOURNAL_PATH: join(runDir(ws, "live"), "journal.jsonl"), RUN_DIR: runDir(ws, "live"), DELTA_AGENT_HOME: AGENT, DELTA_WINDOW_FIRST_ITERATION: "7" },
  });
  expect(summariserRuns(ws, "live")).toHaveLength(before);
  expect(readFileSync(output, "utf8")).toBe(readFileSync(join(ws, ".delta", "context_artifacts", "summary.md"), "utf8"));
});
