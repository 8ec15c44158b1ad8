import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { holdingReader, readJournal } from "../support/journal-read.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { createJournalReader } from "../../src/journal/reader.js";
import { openJournal } from "../../src/journal/writer.js";
import { runSecrets } from "../../src/secrets.js";

const line = (seq: number, content = `m${seq}`): string =>
  `${JSON.stringify({ seq, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content })}\n`;
const contents = (events: ReturnType<typeof readJournal>): string[] =>
  events.map((event) => (event.type === "USER_MESSAGE" ? event.content : event.type));

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "journal-incremental-"));
  path = join(dir, "journal.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("createJournalReader", () => {
  it("returns every event, including those appended since the previous read", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    const reader = holdingReader(path);
    expect(reader.read()).toEqual([]);
    writer.append({ type: "USER_MESSAGE", content: "a" });
    expect(contents(reader.read())).toEqual(["a"]);
    writer.append({ type: "USER_MESSAGE", content: "b" });
    writer.append({ type: "USER_MESSAGE", content: "c" });
    const incremental = reader.read();
    writer.close();
    expect(incremental).toEqual(readJournal(path));
    expect(contents(incremental)).toEqual(["a", "b", "c"]);
  });

  it("parses only appended bytes while the cached prefix's first and last lines are unchanged", () => {
    writeFileSync(path, line(1) + line(2, "aa") + line(3));
    const reader = holdingReader(path);
    reader.read();
    // A same-length edit in the middle is invisible to the cheap checks: seeing "aa" proves the prefix was not re-parsed.
    writeFileSync(path, line(1) + line(2, "zz") + line(3) + line(4));
    expect(contents(reader.read())).toEqual(["m1", "aa", "m3", "m4"]);
  });

  it("numbers lines of later chunks from the start of the file in errors", () => {
    writeFileSync(path, line(1) + line(2));
    const reader = holdingReader(path);
    reader.read();
    appendFileSync(path, "{broken\n");
    expect(() => reader.read()).toThrow(`${path} line 3`);
  });

  it("detects a truncated file and re-reads it in full", () => {
    writeFileSync(path, line(1) + line(2) + line(3));
    const reader = holdingReader(path);
    reader.read();
    truncateSync(path, line(1).length);
    expect(contents(reader.read())).toEqual(["m1"]);
  });

  it("detects a rewrite of the last cached line even when the file grew", () => {
    writeFileSync(path, line(1) + line(2, "old"));
    const reader = holdingReader(path);
    reader.read();
    writeFileSync(path, line(1) + line(2, "new") + line(3));
    expect(contents(reader.read())).toEqual(["m1", "new", "m3"]);
  });

  it("detects a rewrite of the first line of the same length", () => {
    writeFileSync(path, line(1, "aa") + line(2));
    const reader = holdingReader(path);
    reader.read();
    writeFileSync(path, line(1, "bb") + line(2) + line(3));
    expect(contents(reader.read())).toEqual(["bb", "m2", "m3"]);
  });

  it("detects a file replaced by another one", () => {
    writeFileSync(path, line(1) + line(2));
    const reader = holdingReader(path);
    reader.read();
    const replacement = join(dir, "other.jsonl");
    writeFileSync(replacement, line(1, "x") + line(2) + line(3));
    renameSync(replacement, path);
    expect(contents(reader.read())).toEqual(["x", "m2", "m3"]);
  });

  it("does not cache an unterminated last event, so completing it does not duplicate it", () => {
    const third = line(3);
    writeFileSync(path, line(1) + line(2) + third.slice(0, -1));
    const reader = holdingReader(path);
    expect(contents(reader.read())).toEqual(["m1", "m2", "m3"]);
    appendFileSync(path, `\n${line(4)}`);
    expect(contents(reader.read())).toEqual(["m1", "m2", "m3", "m4"]);
  });

  it("warns about the same torn tail once and picks up the line that replaces it", () => {
    writeFileSync(path, `${line(1)}{"seq":2`);
    const warnings: string[] = [];
    const reader = holdingReader(path, { warn: (text) => warnings.push(text) });
    expect(contents(reader.read())).toEqual(["m1"]);
    expect(contents(reader.read())).toEqual(["m1"]);
    expect(warnings).toHaveLength(1);
    truncateSync(path, line(1).length);
    appendFileSync(path, line(2));
    expect(contents(reader.read())).toEqual(["m1", "m2"]);
  });

  it("hands its sink only what was appended, restarts it when the file is not the one read before, and keeps no event", () => {
    writeFileSync(path, line(1) + line(2));
    const reader = createJournalReader(path);
    const handed: string[] = [];
    const sink = { restart: () => handed.push("restart"), event: (event: JournalEvent) => handed.push(String(event.seq)) };
    reader.read(sink);
    appendFileSync(path, line(3));
    reader.read(sink);
    reader.read(sink);
    expect(handed).toEqual(["restart", "1", "2", "3"]);
    writeFileSync(`${path}.new`, line(1, "other") + line(2));
    renameSync(`${path}.new`, path);
    reader.read(sink);
    expect(handed.slice(4)).toEqual(["restart", "1", "2"]);
    reader.read(sink, { fromStart: true });
    expect(handed.slice(7)).toEqual(["restart", "1", "2"]);
  });

  it("starts over after a read that failed part-way: the events it handed over are not a prefix to build on", () => {
    writeFileSync(path, line(1));
    const reader = createJournalReader(path);
    const handed: string[] = [];
    const sink = { restart: () => handed.push("restart"), event: (event: JournalEvent) => handed.push(String(event.seq)) };
    reader.read(sink);
    appendFileSync(path, line(2) + "not json\n");
    expect(() => reader.read(sink)).toThrow(`${path} line 3`);
    truncateSync(path, Buffer.byteLength(line(1) + line(2)));
    reader.read(sink);
    expect(handed).toEqual(["restart", "1", "2", "restart", "1", "2"]);
  });
});

describe("read cost over a long run (why iteration 1000 costs what iteration 10 does)", () => {
  const thoughtOf = (iteration: number) => ({
    type: "THOUGHT" as const,
    iteration,
    content: null,
    tool_calls: [{ id: `call_${iteration}`, name: "echo", arguments: JSON.stringify({ text: `${iteration}` }) }],
    usage: { input_tokens: 10, output_tokens: 5 },
    model: "m",
  });

  it("reads only the new bytes plus the first and last cached lines, as much at event 1000 as at event 10", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    const reader = holdingReader(path);
    writer.append({ type: "USER_MESSAGE", content: "start" });
    reader.read();
    const costOfOneRead = (iteration: number) => {
      const before = reader.cost();
      const sizeBefore = statSync(path).size;
      writer.append(thoughtOf(iteration));
      const appended = statSync(path).size - sizeBefore;
      reader.read();
      const after = reader.cost();
      return { appended, bytesRead: after.bytesRead - before.bytesRead, linesParsed: after.linesParsed - before.linesParsed };
    };
    const costs = new Map<number, ReturnType<typeof costOfOneRead>>();
    for (let iteration = 1; iteration <= 1000; iteration += 1) costs.set(iteration, costOfOneRead(iteration));
    writer.close();

    const firstLineBytes = readFileSync(path, "utf8").indexOf("\n") + 1;
    for (const iteration of [10, 1000]) {
      const cost = costs.get(iteration)!;
      expect(cost.linesParsed).toBe(1);
      // Exactly: the appended line, the previous last line (compared) and the first line (compared).
      expect(cost.bytesRead).toBe(cost.appended + costs.get(iteration - 1)!.appended + firstLineBytes);
    }
    expect(reader.read()).toHaveLength(1001);
  });

  it("parses each line exactly once when reads follow appends as in the engine loop", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    const reader = holdingReader(path);
    writer.append({ type: "USER_MESSAGE", content: "start" });
    for (let iteration = 1; iteration <= 500; iteration += 1) {
      reader.read(); // deriving the next iteration number
      reader.read(); // building the context
      writer.append(thoughtOf(iteration));
      writer.append({ type: "ACTION_REQUEST", iteration, action_id: `call_${iteration}`, tool_name: "echo", tool_args: { text: `${iteration}` }, resolved_command: ["echo", `${iteration}`] });
      writer.append({ type: "ACTION_RESULT", iteration, action_id: `call_${iteration}`, tool_name: "echo", status: "SUCCESS", observation_content: `${iteration}\n`, exit_code: 0, duration_ms: 1 });
    }
    const events = reader.read();
    writer.close();
    const fileBytes = statSync(path).size;
    expect(events).toHaveLength(1 + 500 * 3);
    expect(reader.cost().linesParsed).toBe(events.length);
    // Each byte is read once as new, and the two check lines per read stay small: linear in the file, not quadratic.
    expect(reader.cost().bytesRead).toBeLessThan(fileBytes * 3);
  });
});
