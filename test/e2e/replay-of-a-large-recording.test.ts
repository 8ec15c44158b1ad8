// Replay from a run directory reads the reply its next model call needs, one record at a time: a recording of whole
// requests (io.requests: full, as every run before content-addressed records wrote) far larger than the heap replays,
// and `show --request N` prints one of its requests.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, runDir, writeAgent, setUpE2e } from "./harness.js";

/** 64 records of a 1 MB request each: the recording is well over twice the heap the replay is given. */
const RECORDS = 64;
const REQUEST_BYTES = 1 << 20;
const HEAP_MB = 24;

const { root, serve } = setUpE2e();
let server: MockLlm;
let agent: string;
let ws: string;
let recording: string;

beforeAll(async () => {
  server = await serve(() => reply.text("recorded"));
  agent = writeAgent(root, { agentYaml: "name: test-agent\nllm:\n  model: mock-model\nio:\n  requests: full\ntools:\n  - name: echo\n    exec: \"echo ${text}\"\n" });
  ws = join(root, "ws");
  const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "source", "-m", "go"], { env: modelEnv(server.baseUrl) });
  expect(run.exitCode, run.stderr).toBe(0);
  recording = runDir(ws, "source");
  // The one record rewritten as RECORDS calls, each with its own reply and a request of REQUEST_BYTES.
  const dir = join(recording, "io", "invocations");
  const [name] = readdirSync(dir);
  const record = JSON.parse(readFileSync(join(dir, name!), "utf8")) as { iteration: number; request: { messages: { content: string }[] }; reply: { content: string } };
  expect(record.request.messages.length).toBeGreaterThan(0);
  rmSync(join(dir, name!));
  for (let iteration = 1; iteration <= RECORDS; iteration += 1) {
    const messages = record.request.messages.map((message, index) => (index === 0 ? { ...message, content: `call ${iteration} `.padEnd(REQUEST_BYTES, "x") } : message));
    writeFileSync(join(dir, `20250101T000000000Z_${String(iteration).padStart(4, "0")}.json`), JSON.stringify({ ...record, iteration, request: { ...record.request, messages }, reply: { ...record.reply, content: `reply ${iteration}` } }));
  }
}, 60_000);

it("replays a run directory whose records are over twice the heap, answering from the first record", async () => {
  const before = server.requests.length;
  const replayed = await delta(["run", "--agent", agent, "-w", join(root, "replayed"), "--run-id", "replayed", "--replay", recording, "-m", "go", "--format", "json"], {
    env: modelEnv("http://127.0.0.1:9/v1", { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` }),
    timeoutMs: 120_000,
  });
  expect(replayed.exitCode, replayed.stderr.slice(-2000)).toBe(0);
  expect(JSON.parse(replayed.stdout)).toMatchObject({ status: "COMPLETED", result_text: "reply 1" });
  expect(server.requests.length).toBe(before);
}, 180_000);

it("show --request prints one request of such a recording under the same heap", async () => {
  const shown = await delta(["show", "source", "-w", ws, "--request", String(RECORDS)], { env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` }, timeoutMs: 60_000 });
  expect(shown.exitCode, shown.stderr.slice(-2000)).toBe(0);
  const request = JSON.parse(shown.stdout) as { messages: { content: string }[] };
  expect(request.messages[0]!.content.startsWith(`call ${RECORDS} `)).toBe(true);
  expect(request.messages[0]!.content).toHaveLength(REQUEST_BYTES);
}, 120_000);

it("still refuses a recording with a broken record before the run starts, naming the file", async () => {
  const dir = join(recording, "io", "invocations");
  const broken = join(dir, "20250101T000000000Z_9999.json");
  writeFileSync(broken, JSON.stringify({ iteration: RECORDS + 1 }));
  try {
    const replayed = await delta(["run", "--agent", agent, "-w", join(root, "refused"), "--replay", recording, "-m", "go"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(replayed.exitCode).not.toBe(0);
    expect(replayed.stderr).toContain(`${broken}: not a valid invocation record`);
  } finally {
    rmSync(broken);
  }
}, 60_000);
