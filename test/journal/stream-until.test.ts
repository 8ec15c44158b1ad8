// streamJournal's untilSeq: a reader that wants the first events of a long journal (show --request's pointed-at texts) stops in the window that holds the last of them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { streamJournal } from "../../src/journal/reader.js";

const line = (seq: number): string => JSON.stringify({ seq, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content: `${seq}:`.padEnd(1024, "x") });

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "journal-until-"));
  path = join(dir, "journal.jsonl");
  // About 3 MB of events, then a line that is no event: reaching it fails the read.
  writeFileSync(path, `${Array.from({ length: 3000 }, (_, index) => line(index + 1)).join("\n")}\nnot an event\n`);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("streamJournal with untilSeq", () => {
  it("visits every event up to the one asked for and reads no further than its window", () => {
    const seen: number[] = [];
    streamJournal(path, (event) => seen.push(event.seq), { untilSeq: 20 });
    expect(seen.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    expect(seen.length).toBeLessThan(3000);
  });

  it("reads the whole journal without it, and meets the bad line", () => {
    expect(() => streamJournal(path, () => {})).toThrow(/line 3001: not valid JSON/);
  });
});
