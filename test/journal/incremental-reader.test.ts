import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createJournalReader, readJournal } from "../../src/journal/reader.js";
import { openJournal } from "../../src/journal/writer.js";

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
    const writer = await openJournal(path);
    const reader = createJournalReader(path);
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
    const reader = createJournalReader(path);
    reader.read();
    // A same-length edit in the middle is invisible to the cheap checks: seeing "aa" proves the prefix was not re-parsed.
    writeFileSync(path, line(1) + line(2, "zz") + line(3) + line(4));
    expect(contents(reader.read())).toEqual(["m1", "aa", "m3", "m4"]);
  });

  it("numbers lines of later chunks from the start of the file in errors", () => {
    writeFileSync(path, line(1) + line(2));
    const reader = createJournalReader(path);
    reader.read();
    appendFileSync(path, "{broken\n");
    expect(() => reader.read()).toThrow(`${path} line 3`);
  });

  it("detects a truncated file and re-reads it in full", () => {
    writeFileSync(path, line(1) + line(2) + line(3));
    const reader = createJournalReader(path);
    reader.read();
    truncateSync(path, line(1).length);
    expect(contents(reader.read())).toEqual(["m1"]);
  });

  it("detects a rewrite of the last cached line even when the file grew", () => {
    writeFileSync(path, line(1) + line(2, "old"));
    const reader = createJournalReader(path);
    reader.read();
    writeFileSync(path, line(1) + line(2, "new") + line(3));
    expect(contents(reader.read())).toEqual(["m1", "new", "m3"]);
  });

  it("detects a rewrite of the first line of the same length", () => {
    writeFileSync(path, line(1, "aa") + line(2));
    const reader = createJournalReader(path);
    reader.read();
    writeFileSync(path, line(1, "bb") + line(2) + line(3));
    expect(contents(reader.read())).toEqual(["bb", "m2", "m3"]);
  });

  it("detects a file replaced by another one", () => {
    writeFileSync(path, line(1) + line(2));
    const reader = createJournalReader(path);
    reader.read();
    const replacement = join(dir, "other.jsonl");
    writeFileSync(replacement, line(1, "x") + line(2) + line(3));
    renameSync(replacement, path);
    expect(contents(reader.read())).toEqual(["x", "m2", "m3"]);
  });

  it("does not cache an unterminated last event, so completing it does not duplicate it", () => {
    const third = line(3);
    writeFileSync(path, line(1) + line(2) + third.slice(0, -1));
    const reader = createJournalReader(path);
    expect(contents(reader.read())).toEqual(["m1", "m2", "m3"]);
    appendFileSync(path, `\n${line(4)}`);
    expect(contents(reader.read())).toEqual(["m1", "m2", "m3", "m4"]);
  });

  it("warns about the same torn tail once and picks up the line that replaces it", () => {
    writeFileSync(path, `${line(1)}{"seq":2`);
    const warnings: string[] = [];
    const reader = createJournalReader(path, { warn: (text) => warnings.push(text) });
    expect(contents(reader.read())).toEqual(["m1"]);
    expect(contents(reader.read())).toEqual(["m1"]);
    expect(warnings).toHaveLength(1);
    truncateSync(path, line(1).length);
    appendFileSync(path, line(2));
    expect(contents(reader.read())).toEqual(["m1", "m2"]);
  });

  it("returns arrays the caller may change without corrupting later reads", () => {
    writeFileSync(path, line(1));
    const reader = createJournalReader(path);
    reader.read().pop();
    expect(contents(reader.read())).toEqual(["m1"]);
  });
});
