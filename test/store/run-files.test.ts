// The run files' one reader: each event folded once as it is parsed, and kept only while a request can still show it.
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildContext } from "../../src/context/build.js";
import { contextBudget } from "../../src/context/budget.js";
import { ContextConfigSchema } from "../../src/context/schema.js";
import type { JournalEvent, NewEvent } from "../../src/journal/events.js";
import { runPaths, type RunPaths } from "../../src/store/run-dir.js";
import { openRunFiles } from "../../src/store/run-files.js";
import { deriveRunState, readJournal, shownJournalOf } from "../support/journal-read.js";
import { parseRunId } from "../../src/store/run-id.js";
import { inheritedEnv } from "../support/inherited-env.js";

const timestamp = "2026-01-01T00:00:00.000Z";
const WINDOW = 10;
const CONFIG = ContextConfigSchema.parse({ sources: [{ type: "journal", max_iterations: WINDOW }] });

let root: string;
let paths: RunPaths;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "run-files-"));
  paths = runPaths(root, parseRunId("run-1"));
  mkdirSync(paths.runDir, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A journal written line by line, as an engine appends it. */
class Journal {
  events: JournalEvent[] = [];
  constructor(private readonly path: string) {
    writeFileSync(path, "");
  }
  add(event: NewEvent, terminated = true): JournalEvent {
    const written = { seq: this.events.length + 1, timestamp, ...event } as JournalEvent;
    this.events.push(written);
    appendFileSync(this.path, JSON.stringify(written) + (terminated ? "\n" : ""));
    return written;
  }
  start(): void {
    this.add({ type: "ENGINE_START", run_id: "run-1", agent_home: "/agent", work_dir: "/work", config: {}, engine_version: "1.0.0" });
    this.add({ type: "USER_MESSAGE", content: "read every page" });
  }
  iteration(n: number, usage = { input_tokens: 10, output_tokens: 2 }): void {
    this.add({ type: "THOUGHT", iteration: n, content: null, tool_calls: [{ id: `c${n}`, name: "read", arguments: `{"page":${n}}` }], usage, model: "m" });
    this.add({ type: "ACTION_REQUEST", iteration: n, action_id: `c${n}`, tool_name: "read", tool_args: { page: n }, resolved_command: ["read", String(n)] });
    this.add({ type: "ACTION_RESULT", iteration: n, action_id: `c${n}`, tool_name: "read", status: "SUCCESS", observation_content: `page ${n} `.repeat(40), exit_code: 0, duration_ms: 1 });
  }
}

/** The context the engine sends for the next iteration, journaling its window move as the loop does. */
async function nextRequest(journal: Journal, shown: ReturnType<ReturnType<typeof openRunFiles>["shown"]>, iteration: number) {
  const built = await buildContext(CONFIG, { agentHome: "/agent", cwd: root, runId: "run-1", runDir: paths.runDir, journalPath: paths.journal, baseEnv: inheritedEnv, journal: shown, budget: contextBudget({ model: "m" }, CONFIG), iteration });
  if (built.windowEvent) journal.add(built.windowEvent);
  return built;
}

describe("openRunFiles: what a request can show", () => {
  it("keeps the user messages and the iterations from the window on, and builds every request as the whole journal would", async () => {
    const journal = new Journal(paths.journal);
    journal.start();
    const files = openRunFiles(paths, { warn: () => {} });
    let largest = 0;
    for (let n = 1; n <= 200; n += 1) {
      const whole = shownJournalOf([...journal.events]);
      const shown = files.shown();
      largest = Math.max(largest, shown.events.length);
      expect(shown.window).toEqual(whole.window);
      const fromShown = await nextRequest(journal, shown, n);
      const fromWhole = await buildContext(CONFIG, { agentHome: "/agent", cwd: root, runId: "run-1", runDir: paths.runDir, journalPath: paths.journal, baseEnv: inheritedEnv, journal: whole, budget: contextBudget({ model: "m" }, CONFIG), iteration: n });
      expect(fromShown.messages).toEqual(fromWhole.messages);
      expect(fromShown.windowEvent).toEqual(fromWhole.windowEvent);
      journal.iteration(n);
    }
    // 200 iterations and 20 window moves written; what is held is the window, not the run.
    expect(journal.events.filter((event) => event.type === "CONTEXT_WINDOW").length).toBeGreaterThanOrEqual(20);
    expect(largest).toBeLessThanOrEqual(2 + 3 * (WINDOW + 1) + 2);
    const shown = files.shown();
    expect(shown.events.slice(0, 2).map((event) => event.type)).toEqual(["ENGINE_START", "USER_MESSAGE"]);
    expect(shown.events.every((event) => !("iteration" in event) || event.iteration >= shown.window.first)).toBe(true);
    expect(files.state()).toEqual(deriveRunState(readJournal(paths.journal)));
    // One parse from the start, then only appended lines.
    expect(files.readCost()).toMatchObject({ fullParses: 1, linesParsed: journal.events.length });
  });

  it("keeps from the window a continued run's journal records, on its first read of all of it", () => {
    const journal = new Journal(paths.journal);
    journal.start();
    for (let n = 1; n <= 300; n += 1) {
      if (n > 1 && n % 50 === 1) journal.add({ type: "CONTEXT_WINDOW", iteration: n, reason: "max_iterations", first_iteration: n - 5, dropped_from: n - 50, dropped_to: n - 6, limit: WINDOW });
      journal.iteration(n);
    }
    journal.add({ type: "USER_MESSAGE", content: "and now the index" });
    const shown = openRunFiles(paths, { warn: () => {} }).shown();
    expect(shown.window.first).toBe(246);
    expect(shown.events.map((event) => event.seq)).toEqual(
      journal.events.filter((event) => !("iteration" in event) || event.iteration >= 246).map((event) => event.seq),
    );
    expect(shown.events).toHaveLength(3 + 55 * 3 + 1);
  });
});

describe("openRunFiles: folding each event once", () => {
  it("folds a valid last line not yet terminated, and once it is, does not fold it twice", () => {
    const journal = new Journal(paths.journal);
    journal.start();
    journal.iteration(1);
    journal.add({ type: "THOUGHT", iteration: 2, content: "done", tool_calls: [], usage: { input_tokens: 7, output_tokens: 1 }, model: "m" }, false);
    const files = openRunFiles(paths, { warn: () => {} });
    expect(files.state().usage.total.input_tokens).toBe(17);
    // The writer terminates such a line before it appends (journal/writer.ts), as here.
    appendFileSync(paths.journal, "\n");
    journal.add({ type: "USER_MESSAGE", content: "once more" });
    journal.iteration(3);
    expect(files.state()).toEqual(deriveRunState(readJournal(paths.journal)));
    expect(files.state().usage.total.input_tokens).toBe(27);
    expect(files.shown().events.filter((event) => event.seq === 6)).toHaveLength(1);
  });

  it("starts over when the journal is replaced by another file", () => {
    const journal = new Journal(paths.journal);
    journal.start();
    for (let n = 1; n <= 4; n += 1) journal.iteration(n);
    const files = openRunFiles(paths, { warn: () => {} });
    expect(files.state().iterations).toBe(4);
    const other = join(root, "other.jsonl");
    const replacement = new Journal(other);
    replacement.start();
    replacement.iteration(1, { input_tokens: 50, output_tokens: 5 });
    renameSync(other, paths.journal);
    expect(files.state()).toEqual(deriveRunState(readJournal(paths.journal)));
    expect(files.state().usage.total.input_tokens).toBe(50);
    expect(files.shown().events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
  });
});
