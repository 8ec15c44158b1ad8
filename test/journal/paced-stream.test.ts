// streamJournalPaced: streamJournal's events and checks, a window of lines at a time with an awaited pause between windows.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { streamJournalPaced } from "../../src/journal/reader.js";
import { streamJournal } from "../../src/journal/reader.js";

const line = (seq: number, content = `m${seq}`): string =>
  JSON.stringify({ seq, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content });

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "journal-paced-"));
  path = join(dir, "journal.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The events streamed, and how many were handed over before each pause. */
async function paced(warnings: string[] = []): Promise<{ events: JournalEvent[]; pauses: number[] }> {
  const events: JournalEvent[] = [];
  const pauses: number[] = [];
  await streamJournalPaced(path, (event) => events.push(event), async () => void pauses.push(events.length), { warn: (text) => warnings.push(text) });
  return { events, pauses };
}

function whole(): JournalEvent[] {
  const events: JournalEvent[] = [];
  streamJournal(path, (event) => events.push(event));
  return events;
}

describe("streamJournalPaced", () => {
  it("hands over streamJournal's events in order, pausing between windows of about 1 MB, a line longer than a window included", async () => {
    const lines = Array.from({ length: 3_000 }, (_, index) => line(index + 1, `${index + 1} `.padEnd(1_000, "x")));
    lines.splice(1_500, 1, line(1_501, "y".repeat(3 << 20)));
    writeFileSync(path, `${lines.join("\n")}\n`);
    const { events, pauses } = await paced();
    expect(events).toEqual(whole());
    expect(events.map((event) => event.seq)).toEqual(lines.map((_, index) => index + 1));
    // About 1,000 lines of 1 KB a window; the 3 MB line widens its window alone.
    expect(pauses.length).toBeGreaterThanOrEqual(3);
    expect(pauses.every((count, index) => index === 0 || count > pauses[index - 1]!)).toBe(true);
    expect(pauses[0]).toBeLessThan(1_100);
  });

  it("hands over a valid unterminated last line, and warns of a torn one and leaves it out", async () => {
    writeFileSync(path, `${line(1)}\n${line(2)}`);
    expect((await paced()).events.map((event) => event.seq)).toEqual([1, 2]);
    writeFileSync(path, `${line(1)}\n{"seq":2,"timest`);
    const warnings: string[] = [];
    expect((await paced(warnings)).events.map((event) => event.seq)).toEqual([1]);
    expect(warnings).toEqual([expect.stringContaining("ignoring a torn last line")]);
  });

  it("refuses a gap in seq past the first window naming the file and the line", async () => {
    const lines = Array.from({ length: 2_000 }, (_, index) => line(index + 1, "z".repeat(1_000)));
    lines[1_800] = line(1_900);
    writeFileSync(path, `${lines.join("\n")}\n`);
    await expect(paced()).rejects.toThrow(new RegExp(`${path} line 1801`));
  });

  it("refuses a journal rewritten as one JSON array", async () => {
    writeFileSync(path, `[${line(1)}]\n`);
    await expect(paced()).rejects.toThrow(/JSON array/);
  });
});
