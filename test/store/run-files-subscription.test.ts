// The run files' one subscription: every event this process appends reaches each listener once, in append order, with its line as written; nothing else does.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { runSecrets } from "../../src/secrets.js";
import { runPaths, type RunPaths } from "../../src/store/run-dir.js";
import { openRunFiles, type AppendListener } from "../../src/store/run-files.js";
import { parseRunId } from "../../src/store/run-id.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "run-files-subscription-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function runDir(id: string): RunPaths {
  const paths = runPaths(root, parseRunId(id));
  mkdirSync(paths.runDir, { recursive: true });
  return paths;
}

function recorder(): { listener: AppendListener; seen: { seq: number; line: string }[] } {
  const seen: { seq: number; line: string }[] = [];
  return { listener: (event, line) => seen.push({ seq: event.seq, line }), seen };
}

const writing = (listener?: AppendListener) => ({ secrets: runSecrets(["sk-test-0123456789abcdef"]), warn: () => {}, requestRecords: "parts" as const, listener });

describe("the run files' subscription", () => {
  it("hands the first listener every event from the first, a later one every event after it subscribed, each with its line as written", async () => {
    const paths = runDir("run-1");
    const first = recorder();
    const files = await openRunFiles(paths, { warn: () => {} }).startWriting(writing(first.listener));
    files.journal.append({ type: "ENGINE_START", run_id: "run-1", agent_home: "/agent", work_dir: root, config: {}, engine_version: "1" });
    const later = recorder();
    files.subscribe(later.listener);
    files.journal.append({ type: "USER_MESSAGE", content: "use sk-test-0123456789abcdef" });
    files.journal.append({ type: "ERROR", error_type: "X", error_message: "y" });
    files.close();

    const lines = readFileSync(paths.journal, "utf8").trimEnd().split("\n");
    expect(first.seen).toEqual(lines.map((line, index) => ({ seq: index + 1, line })));
    expect(later.seen).toEqual(lines.slice(1).map((line, index) => ({ seq: index + 2, line })));
    // The line handed on is the line on disk: redacted.
    expect(later.seen[0]!.line).toContain("[REDACTED]");
  });

  it("keeps two runs of one process apart: a listener hears only its own run's journal", async () => {
    const one = recorder();
    const two = recorder();
    const a = await openRunFiles(runDir("a"), { warn: () => {} }).startWriting(writing(one.listener));
    const b = await openRunFiles(runDir("b"), { warn: () => {} }).startWriting(writing(two.listener));
    a.journal.append({ type: "USER_MESSAGE", content: "for a" });
    b.journal.append({ type: "USER_MESSAGE", content: "for b" });
    a.journal.append({ type: "USER_MESSAGE", content: "for a again" });
    a.close();
    b.close();
    expect(one.seen.map(({ line }) => JSON.parse(line).content)).toEqual(["for a", "for a again"]);
    expect(two.seen.map(({ line }) => JSON.parse(line).content)).toEqual(["for b"]);
  });

  it("reads back this process's own events without parsing their lines again: the reader's cache is a listener too", async () => {
    const paths = runDir("run-1");
    const files = await openRunFiles(paths, { warn: () => {} }).startWriting(writing());
    const appended: JournalEvent[] = [files.journal.append({ type: "USER_MESSAGE", content: "one" }), files.journal.append({ type: "USER_MESSAGE", content: "two" })];
    // The very objects appended: taken from the cache, not parsed from their lines.
    expect(files.shown().events[0]).toBe(appended[0]);
    expect(files.shown().events[1]).toBe(appended[1]);
    files.close();
  });

  it("returns the event of the type appended, so no caller checks the type again", async () => {
    const files = await openRunFiles(runDir("run-1"), { warn: () => {} }).startWriting(writing());
    const thought = files.journal.append({ type: "THOUGHT", iteration: 1, content: "done", tool_calls: [], usage: null, model: "m" });
    expectTypeOf(thought).toEqualTypeOf<EventOf<"THOUGHT">>();
    expect(thought.iteration).toBe(1);
    files.close();
  });
});
