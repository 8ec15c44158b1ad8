// Journals of any size: show, report, list-runs, export and continue read a journal as a stream of lines, never as one string.
//
// V8 refuses a string over about 512 MB; here that limit is lowered to 1 MB (test/support/string-limit.cjs) and the
// journal is 8 MB, so a reader that read the file, or built its output, as one string fails as on a multi-GB journal.
// The line limit is lowered with DELTA_JOURNAL_MAX_LINE_BYTES, the engine's own knob.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, runDir, writeAgent, setUpE2e } from "./harness.js";

const STRING_LIMIT = 1 << 20;
const PRELOAD = join(import.meta.dirname, "../support/string-limit.cjs");
/** 2,000 turns of 4 KB: an 8 MB journal, eight times the string limit. */
const TURNS = 2_000;
const TEXT_BYTES = 4_096;

const { root, serve } = setUpE2e();
let server: MockLlm;
let ws: string;
let journalBytes: number;

/** A `delta` whose strings may not pass STRING_LIMIT characters. */
function limited(extra: Record<string, string> = {}): Record<string, string> {
  return modelEnv(server.baseUrl, { NODE_OPTIONS: `--require ${PRELOAD}`, DELTA_TEST_STRING_LIMIT: String(STRING_LIMIT), ...extra });
}

/** The run's journal grown to `turns` more turns of `bytes` of text each, still COMPLETED. */
function grow(events: JournalEvent[], turns: number, bytes: number): string {
  const [start, message, thought, end] = events as [JournalEvent, EventOf<"USER_MESSAGE">, EventOf<"THOUGHT">, EventOf<"ENGINE_END">];
  const grown: JournalEvent[] = [start, message, thought];
  for (let turn = 2; turn < turns + 2; turn += 1) {
    const text = `turn ${turn} `.padEnd(bytes, "x");
    grown.push({ ...message, seq: grown.length + 1, content: `question ${text}` }, { ...thought, seq: grown.length + 2, iteration: turn, content: `answer ${text}` });
  }
  grown.push({ ...end, seq: grown.length + 1, final_iteration: turns + 1 });
  return grown.map((event) => `${JSON.stringify(event)}\n`).join("");
}

beforeAll(async () => {
  server = await serve(() => reply.text("the last answer"));
  ws = join(root, "ws");
  const run = await delta(["run", "--agent", writeAgent(root), "-w", ws, "--run-id", "big", "-m", "go"], { env: modelEnv(server.baseUrl) });
  expect(run.exitCode, run.stderr).toBe(0);
  const text = grow(readEvents(ws, "big"), TURNS, TEXT_BYTES);
  writeFileSync(join(runDir(ws, "big"), "journal.jsonl"), text);
  journalBytes = Buffer.byteLength(text);
}, 60_000);

describe("a journal larger than the longest string", () => {
  it("is eight times the lowered string limit", () => {
    expect(journalBytes).toBeGreaterThan(8 * STRING_LIMIT);
  });

  it("is shown whole, every turn printed, by a show that prints each event as it reads it", async () => {
    const shown = await delta(["show", "big", "-w", ws], { env: limited() });
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout.length).toBeGreaterThan(STRING_LIMIT);
    expect(shown.stdout).toContain(`[${TURNS + 1}]`);
    expect(shown.stdout).toMatch(/status\s+COMPLETED/);
    expect(shown.stderr).not.toMatch(/Invalid string length/);
  }, 60_000);

  it("is reported as HTML with every event, the page written as the journal streams past", async () => {
    const file = join(root, "big.html");
    const reported = await delta(["report", "big", "-w", ws, "-o", file], { env: limited() });
    expect(reported.exitCode, reported.stderr).toBe(0);
    const page = readFileSync(file, "utf8");
    expect(page).toContain(`id="event-${2 * TURNS + 4}"`);
    // The charts draw the last 1,000 iterations, and say so.
    expect(page).toContain(`The charts draw the last 1000 of the run's ${TURNS + 1} iterations`);
    expect(page.trimEnd().endsWith("</html>")).toBe(true);
    const piped = await delta(["report", "big", "-w", ws], { env: limited() });
    expect(piped.exitCode, piped.stderr).toBe(0);
    expect(piped.stdout).toBe(page);
  }, 60_000);

  it("is listed with its status and iterations, and its spans exported", async () => {
    const listed = await delta(["list-runs", "-w", ws, "--format", "json"], { env: limited() });
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ run_id: "big", status: "COMPLETED", iterations: TURNS + 1 }]);
    const exported = await delta(["export", "big", "-w", ws, "--format", "otlp-json"], { env: limited() });
    expect(exported.exitCode, exported.stderr).toBe(0);
    // JSON Lines: an OTLP/JSON request per line, each well under the string limit.
    const lines = exported.stdout.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(1);
    type Request = { resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[] };
    const spans = lines.flatMap((line) => (JSON.parse(line) as Request).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    expect(spans.filter((span) => span.name.startsWith("chat"))).toHaveLength(TURNS + 1);
  }, 60_000);

  it("is continued: the next turn is asked and journaled after it", async () => {
    const continued = await delta(["continue", "--run-id", "big", "-w", ws, "-m", "one more"], { env: limited() });
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(readEvents(ws, "big").slice(-4).map((event) => event.type)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ENGINE_END"]);
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe("a journal line over a limit", () => {
  it("over the line limit is refused naming the file and the line, never half-printed", async () => {
    const shown = await delta(["show", "big", "-w", ws], { env: limited({ DELTA_JOURNAL_MAX_LINE_BYTES: "4000" }) });
    expect(shown.exitCode).toBe(1);
    expect(shown.stderr).toMatch(/journal\.jsonl line 4: \d+ bytes, more than the 4000 bytes a journal line may hold/);
    expect(shown.stdout).toBe("");
  }, 60_000);

  it("too long for one string is refused naming the file and the line, not with a bare Invalid string length", async () => {
    const ws2 = join(root, "ws-long-line");
    const run = await delta(["run", "--agent", writeAgent(root, {}, "agent-long"), "-w", ws2, "--run-id", "long", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    writeFileSync(join(runDir(ws2, "long"), "journal.jsonl"), grow(readEvents(ws2, "long"), 2, 2 * STRING_LIMIT));
    for (const command of [["show", "long", "-w", ws2], ["list-runs", "-w", ws2, "--format", "json"]]) {
      const read = await delta(command, { env: limited() });
      expect(read.stderr).toMatch(/journal\.jsonl line 4: the event is too large to hold as one string/);
    }
  }, 60_000);
});
