// A continue reads the run's journal once: one parse from the start, then only what is appended (engine.log says what reading cost).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, eventTypes, modelEnv, readEvents, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;

beforeAll(async () => {
  server = await serve(() => reply.text("an answer"));
});

const JOURNAL_EVENTS = 1_000;

/** The environment of a `delta` whose journal-line parses are counted (test/support/count-journal-parses.cjs); `parses()` reads the count. */
function countingParses(baseUrl: string): { env: Record<string, string>; parses: () => number } {
  const out = join(root, `parses-${Math.random().toString(16).slice(2)}.txt`);
  rmSync(out, { force: true });
  const preload = join(import.meta.dirname, "../support/count-journal-parses.cjs");
  return { env: modelEnv(baseUrl, { NODE_OPTIONS: `--require ${preload}`, DELTA_TEST_PARSES_OUT: out }), parses: () => Number(readFileSync(out, "utf8").trim()) };
}

/** The run's journal grown to `count` events by more turns like its first, left RUNNING (no ENGINE_END): its engine died. */
function growToRunning(events: JournalEvent[], count: number): string {
  const [start, message, thought] = events as [JournalEvent, EventOf<"USER_MESSAGE">, EventOf<"THOUGHT">];
  const grown: JournalEvent[] = [start, message, thought];
  while (grown.length < count) {
    const seq = grown.length + 1;
    const iteration = (seq - 1) / 2;
    grown.push(seq % 2 === 0 ? { ...message, seq, content: `message ${iteration}` } : { ...thought, seq, iteration, content: `answer ${iteration}` });
  }
  return grown.map((event) => `${JSON.stringify(event)}\n`).join("");
}

describe("a continue reads the journal once", () => {
  it(`parses a ${JOURNAL_EVENTS}-event journal of a crashed run fully once, through the janitor's repair and the whole continue`, async () => {
    const agent = writeAgent(root);
    const ws = join(root, "ws");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "long", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode).toBe(0);
    const journal = join(runDir(ws, "long"), "journal.jsonl");
    writeFileSync(journal, growToRunning(readEvents(ws, "long"), JOURNAL_EVENTS));

    const counted = countingParses(server.baseUrl);
    const resumed = await delta(["continue", "--run-id", "long", "-w", ws, "-m", "go on"], { env: counted.env });
    expect(resumed.exitCode).toBe(0);
    // Each line once, and the first line once more (the agent is loaded from it before the run is taken): 5,005 before.
    expect(counted.parses()).toBe(JOURNAL_EVENTS + 1);
    const events = readEvents(ws, "long");
    // The janitor's note and end, then this process's own turn: all written by the one writer, after the one parse.
    expect(eventTypes(events.slice(JOURNAL_EVENTS))).toEqual(["ERROR", "ENGINE_END", "ENGINE_START", "USER_MESSAGE", "THOUGHT", "ENGINE_END"]);
    expect(events.at(-3)).toMatchObject({ type: "USER_MESSAGE", content: "go on" });

    const reads = readFileSync(join(runDir(ws, "long"), "engine.log"), "utf8").match(/journal reads: (\d+) from the start, (\d+) lines parsed/g) ?? [];
    // The `run` before it logged its own reads; the continue's line is the last.
    const [, fullParses, linesParsed] = /journal reads: (\d+) from the start, (\d+) lines parsed/.exec(reads.at(-1) ?? "") ?? [];
    expect(reads).toHaveLength(2);
    expect(Number(fullParses)).toBe(1);
    // Every line once; the events this process appended are met on disk as written, never parsed again.
    expect(Number(linesParsed)).toBeLessThanOrEqual(events.length);
  }, 120_000);

  it("parses it fully once when `run --if-exists resume` meets the crashed run and goes on with it", async () => {
    const agent = writeAgent(root, {}, "agent-retry");
    const ws = join(root, "ws-retry");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "retry", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode).toBe(0);
    writeFileSync(join(runDir(ws, "retry"), "journal.jsonl"), growToRunning(readEvents(ws, "retry"), JOURNAL_EVENTS));

    const counted = countingParses(server.baseUrl);
    const retried = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "retry", "-m", "go", "--if-exists", "resume"], { env: counted.env });
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect(counted.parses()).toBe(JOURNAL_EVENTS);
    expect(eventTypes(readEvents(ws, "retry").slice(JOURNAL_EVENTS))).toEqual(["ERROR", "ENGINE_END", "ENGINE_START", "THOUGHT", "ENGINE_END"]);
    const reads = readFileSync(join(runDir(ws, "retry"), "engine.log"), "utf8").match(/journal reads: (\d+) from the start/g) ?? [];
    expect(reads.at(-1)).toBe("journal reads: 1 from the start");
  }, 120_000);
});
