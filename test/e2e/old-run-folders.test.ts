// A run folder written by engine 0.1.0 (whole requests in io/invocations/) is shown, replayed, and continued by today's engine into a folder holding both kinds of record.
import { cpSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { toChatCompletionBody } from "../../src/llm/chat-completions/request-body.js";
import type { LlmRequest } from "../../src/conversation.js";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { CRASH_TRACE, REPO, delta, modelEnv, readEvents, setUpE2e } from "./harness.js";

const FIXTURE = join(REPO, "test/fixtures/runs/old-format-run");
const RUN = "old-format-run";

const { root } = setUpE2e("delta-old-runs-");
let agent: string;
let ws: string;
let runDir: string;

/** A copy of the fixture whose ENGINE_START names the copy's agent and workspace instead of the directory it was made in. */
beforeAll(() => {
  cpSync(FIXTURE, root, { recursive: true });
  agent = join(root, "agent");
  ws = join(root, "work");
  runDir = join(ws, ".delta", RUN);
  const origin = readFileSync(join(FIXTURE, "ORIGIN"), "utf8").trim();
  const journal = join(runDir, "journal.jsonl");
  const [first, ...rest] = readFileSync(journal, "utf8").split("\n");
  writeFileSync(journal, [first!.split(origin).join(root), ...rest].join("\n"));
});

const records = () => readdirSync(join(runDir, "io", "invocations")).filter((name) => name.endsWith(".json")).sort();
const recordOf = (name: string) => JSON.parse(readFileSync(join(runDir, "io", "invocations", name), "utf8")) as { request?: LlmRequest; request_parts?: unknown };

it("shows the old run and prints its whole requests exactly as the records hold them", async () => {
  const shown = await delta(["show", RUN, "-w", ws]);
  expect(shown.exitCode, shown.stderr).toBe(0);
  expect(shown.stdout).toContain("Echo two words, then stop.");
  expect(shown.stdout).toContain("MAX_ITERATIONS");
  const second = await delta(["show", RUN, "-w", ws, "--request", "2"]);
  expect(second.exitCode, second.stderr).toBe(0);
  expect(JSON.stringify(JSON.parse(second.stdout))).toBe(JSON.stringify(recordOf(records()[1]!).request));
});

it("replays the old run's replies into a new run", async () => {
  const replayed = await delta(["run", "--agent", agent, "-w", join(root, "replayed"), "--run-id", "replayed", "--replay", runDir, "--max-iterations", "2", "-m", "Echo two words, then stop.", "--format", "json"]);
  expect(replayed.stderr).not.toMatch(CRASH_TRACE);
  expect(replayed.exitCode).toBe(1);
  expect(JSON.parse(replayed.stdout)).toMatchObject({ status: "FAILED", error: { type: "MAX_ITERATIONS" } });
  const observations = readEvents(join(root, "replayed"), "replayed").flatMap((event) => (event.type === "ACTION_RESULT" ? [event.observation_content] : []));
  expect(observations).toEqual(["first\n", "second\n"]);
});

it("continues the old run: new records are content-addressed beside the old whole ones, every request is rebuilt as sent, and the mixed folder replays", async () => {
  const server = await startMockLlm([reply.toolCalls([{ id: "call_3", name: "echo", arguments: { text: "third" } }]), reply.text("done")]);
  try {
    const continued = await delta(["continue", "--run-id", RUN, "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(continued.stderr).not.toMatch(CRASH_TRACE);
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(JSON.parse(continued.stdout)).toMatchObject({ status: "COMPLETED", result: "done" });

    const names = records();
    expect(names).toHaveLength(4);
    expect(names.map((name) => Object.keys(recordOf(name)).includes("request_parts"))).toEqual([false, false, true, true]);
    expect(readdirSync(join(runDir, "io", "invocations"))).toContain("request-parts.jsonl");
    // The new requests carry the old run's conversation; rebuilt, they are the bodies the server received.
    for (const [index, iteration] of [3, 4].entries()) {
      const shown = await delta(["show", RUN, "-w", ws, "--request", String(iteration)]);
      expect(shown.exitCode, shown.stderr).toBe(0);
      expect(JSON.stringify(toChatCompletionBody(JSON.parse(shown.stdout) as LlmRequest, { stream: false }))).toBe(JSON.stringify(server.requests[index]!.body));
    }
    expect(JSON.stringify(server.requests[0]!.body)).toContain("Echoing second.");
  } finally {
    await server.close();
  }

  const replayed = await delta(["run", "--agent", agent, "-w", join(root, "mixed-replay"), "--run-id", "mixed", "--replay", runDir, "-m", "Echo two words, then stop.", "--format", "json"]);
  expect(replayed.exitCode, replayed.stderr).toBe(0);
  expect(JSON.parse(replayed.stdout)).toMatchObject({ status: "COMPLETED", result: "done" });
});
