import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JournalError } from "../../src/errors.js";

const line = (seq: number, content = `m${seq}`): string =>
  JSON.stringify({ seq, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content });

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "journal-reader-"));
  path = join(dir, "journal.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function readError(): JournalError {
  try {
    readJournal(path);
  } catch (err) {
    if (err instanceof JournalError) return err;
    throw err;
  }
  throw new Error("expected readJournal to fail");
}

describe("readJournal", () => {
  it("returns no events for an empty file", () => {
    writeFileSync(path, "");
    expect(readJournal(path)).toEqual([]);
  });

  it("ignores a torn last line with a warning naming the file", () => {
    writeFileSync(path, `${line(1)}\n${line(2)}\n{"seq":3,"ty`);
    const warnings: string[] = [];
    const events = readJournal(path, { warn: (text) => warnings.push(text) });
    expect(events.map((event) => event.seq)).toEqual([1, 2]);
    expect(warnings).toEqual([expect.stringContaining(path)]);
  });

  it("names the file and line number of invalid JSON in the middle", () => {
    writeFileSync(path, `${line(1)}\n{oops\n${line(2)}\n`);
    expect(readError().message).toMatch(new RegExp(`^${path} line 2: not valid JSON`));
  });

  it("treats an unparseable line followed by a newline as corruption, not a torn write", () => {
    writeFileSync(path, `${line(1)}\n{"seq":2,"ty\n`);
    expect(readError().message).toContain("line 2");
  });

  it("names the field that fails the schema", () => {
    writeFileSync(path, `${line(1)}\n${JSON.stringify({ seq: 2, timestamp: "t", type: "THOUGHT", iteration: 1, content: "x", tool_calls: [{ id: 5 }], usage: null, model: "m" })}\n`);
    expect(readError().message).toMatch(/line 2: field "tool_calls\.0\.id"/);
  });

  it("refuses a gap in seq", () => {
    writeFileSync(path, `${line(1)}\n${line(2)}\n${line(4)}\n`);
    expect(readError().message).toMatch(/line 3: seq 4 where 3 was expected/);
  });

  it("refuses a journal that does not start at seq 1", () => {
    writeFileSync(path, `${line(2)}\n`);
    expect(readError().message).toMatch(/line 1: seq 2 where 1 was expected/);
  });

  it("refuses an empty line in the middle", () => {
    writeFileSync(path, `${line(1)}\n\n${line(2)}\n`);
    expect(readError().message).toMatch(/line 2: empty line/);
  });

  it("refuses a journal rewritten as one JSON array and explains why", () => {
    writeFileSync(path, `  [\n  ${line(1)},\n  ${line(2)}\n]\n`);
    const message = readError().message;
    expect(message).toContain(path);
    expect(message).toContain("JSONL");
    expect(message).toContain("editor");
  });

  it("reports a missing journal as a journal error naming the path", () => {
    expect(readError().message).toContain(path);
  });
});
