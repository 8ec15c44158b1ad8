// streamJournal: each event handed over as its line is parsed, none kept, with the whole read's checks and warnings.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { streamJournal } from "../../src/journal/reader.js";

const line = (seq: number, content = `m${seq}`): string =>
  JSON.stringify({ seq, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content });

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "journal-stream-"));
  path = join(dir, "journal.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function streamed(warnings: string[] = []): JournalEvent[] {
  const events: JournalEvent[] = [];
  streamJournal(path, (event) => events.push(event), { warn: (text) => warnings.push(text) });
  return events;
}

describe("streamJournal", () => {
  it("hands over the same events as a whole read, in order, lines longer than a read chunk included", () => {
    writeFileSync(path, `${[line(1), line(2, "x".repeat(3 << 20)), line(3)].join("\n")}\n`);
    expect(streamed()).toEqual(readJournal(path));
    expect(streamed().map((event) => event.seq)).toEqual([1, 2, 3]);
  });

  it("hands over a valid unterminated last line, and warns of a torn one and leaves it out", () => {
    writeFileSync(path, `${line(1)}\n${line(2)}`);
    expect(streamed().map((event) => event.seq)).toEqual([1, 2]);
    writeFileSync(path, `${line(1)}\n{"seq":2,"timest`);
    const warnings: string[] = [];
    expect(streamed(warnings).map((event) => event.seq)).toEqual([1]);
    expect(warnings).toEqual([expect.stringContaining("ignoring a torn last line")]);
  });

  it("refuses a gap in seq naming the file and line, after handing over the events before it", () => {
    writeFileSync(path, `${line(1)}\n${line(3)}\n`);
    const seen: number[] = [];
    expect(() => streamJournal(path, (event) => seen.push(event.seq))).toThrow(`${path} line 2: seq 3 where 2 was expected`);
    expect(seen).toEqual([1]);
  });

  it("names the file and line when what the visitor makes of an event is too long for one string", () => {
    writeFileSync(path, `${line(1)}\n${line(2)}\n`);
    const visit = (event: JournalEvent): void => {
      if (event.seq === 2) throw new RangeError("Invalid string length");
    };
    expect(() => streamJournal(path, visit)).toThrow(`${path} line 2: the event is too large to hold as one string`);
  });
});
