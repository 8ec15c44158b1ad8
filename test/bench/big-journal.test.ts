// The large-journal rows' journal: a real run's period between two window moves repeated and renumbered reads as one long run that keeps moving its window.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { growJournal } from "../../bench/lib/big-journal.mjs";
import type { EventOf, JournalEvent, NewEvent } from "../../src/journal/events.js";
import { createFoldTracker } from "../../src/journal/fold.js";
import { windowFold } from "../../src/journal/window-state.js";
import { deriveRunState, readJournal } from "../support/journal-read.js";

const at = "2026-01-01T00:00:00.000Z";
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A finished run as the engine journals it: one `read` call an iteration, 2 KB each, its window moved at iterations 10, 20 and 30. */
function finishedRun(iterations: number, movesAt: readonly number[]): string {
  const dir = mkdtempSync(join(tmpdir(), "big-journal-"));
  dirs.push(dir);
  const events: NewEvent[] = [
    { type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: {}, engine_version: "0" },
    { type: "USER_MESSAGE", content: `turns=${iterations} key=r tool=read` },
  ];
  let first = 1;
  for (let iteration = 1; iteration <= iterations; iteration += 1) {
    if (movesAt.includes(iteration)) {
      const next = iteration - 4;
      events.push({ type: "CONTEXT_WINDOW", iteration, reason: "context_window", first_iteration: next, dropped_from: first, dropped_to: next - 1, limit: 10_500 });
      first = next;
    }
    const usage = { input_tokens: 100 * iteration, output_tokens: 5 };
    if (iteration === iterations) {
      events.push({ type: "THOUGHT", iteration, content: "done", tool_calls: [], usage, model: "gpt-4o-mini" });
      break;
    }
    const call = { id: `call_${iteration}`, name: "read", arguments: `{"text":"${iteration}/${iterations}"}` };
    events.push({ type: "THOUGHT", iteration, content: null, tool_calls: [call], usage, model: "gpt-4o-mini" });
    events.push({ type: "ACTION_REQUEST", iteration, action_id: call.id, tool_name: "read", tool_args: { text: `${iteration}/${iterations}` }, resolved_command: ["sh", "-c", "read"] });
    events.push({ type: "ACTION_RESULT", iteration, action_id: call.id, tool_name: "read", status: "SUCCESS", observation_content: `${iteration}/${iterations}\n${"x".repeat(2048)}`, exit_code: 0, duration_ms: 3 });
  }
  events.push({ type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: iterations });
  const lines = events.map((event, index) => JSON.stringify({ seq: index + 1, timestamp: at, ...event }));
  writeFileSync(join(dir, "journal.jsonl"), `${lines.join("\n")}\n`);
  writeFileSync(join(dir, "metadata.json"), JSON.stringify({ run_id: "r", status: "COMPLETED", iterations, journal_bytes: 0 }));
  return dir;
}

describe("growJournal", () => {
  it("repeats the period between the first two window moves, renumbered, so the journal reads as one long run that keeps moving its window", () => {
    const dir = finishedRun(32, [10, 20, 30]);
    const grown = growJournal(dir, 1_000_000);
    const path = join(dir, "journal.jsonl");
    expect(grown.bytes).toBeGreaterThanOrEqual(1_000_000);
    expect(statSync(path).size).toBe(grown.bytes);

    // Every line is an event of the engine's schema, in seq order.
    const events = readJournal(path);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));

    // One THOUGHT per iteration, 1…N, and the run ends on the last.
    const thoughts = events.filter((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");
    expect(thoughts.map((event) => event.iteration)).toEqual(thoughts.map((_, index) => index + 1));
    expect(grown.iterations).toBe(thoughts.length);
    expect(grown.iterations).toBeGreaterThan(300);
    expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED", final_iteration: grown.iterations });
    expect(JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8"))).toMatchObject({ iterations: grown.iterations, journal_bytes: grown.bytes });

    // The window moves every period, each move dropping just what the previous one left shown.
    const moves = events.filter((event): event is EventOf<"CONTEXT_WINDOW"> => event.type === "CONTEXT_WINDOW");
    expect(moves.length).toBe(grown.windowMoves);
    expect(grown.periodIterations).toBe(10);
    moves.forEach((move, index) => {
      expect(move.iteration).toBe(10 * (index + 1));
      expect(move.first_iteration).toBe(move.iteration - 4);
      expect(move.dropped_from).toBe(index === 0 ? 1 : moves[index - 1]!.first_iteration);
      expect(move.dropped_to).toBe(move.first_iteration - 1);
    });
    expect(moves.at(-1)!.iteration).toBe(grown.iterations - 2);

    // Each request and result names a call of its own iteration's THOUGHT; no call id repeats.
    const callOf = new Map(thoughts.flatMap((thought) => thought.tool_calls.map((call) => [call.id, thought.iteration] as const)));
    expect(callOf.size).toBe(grown.iterations - 1);
    for (const event of events) if (event.type === "ACTION_REQUEST" || event.type === "ACTION_RESULT") expect(callOf.get(event.action_id)).toBe(event.iteration);

    // The engine's own folds read it as one run: completed after N iterations, its window from the last move's first iteration.
    expect(deriveRunState(events)).toMatchObject({ status: "COMPLETED", iterations: grown.iterations, pending: [] });
    const tracker = createFoldTracker();
    const window = tracker.register(windowFold);
    for (const event of events as JournalEvent[]) tracker.see(event);
    expect(window().first).toBe(moves.at(-1)!.first_iteration);
  });

  it("refuses a run whose window moved fewer than twice, naming its journal", () => {
    const dir = finishedRun(12, [10]);
    expect(() => growJournal(dir, 1_000_000)).toThrow(`${join(dir, "journal.jsonl")}: the run moved its context window 1 time(s)`);
  });
});
