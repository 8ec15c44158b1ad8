// The writer's lines handed to the reader: reused only when the bytes on disk are exactly what was written.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { holdingReader } from "../support/journal-read.js";
import { openJournal } from "../../src/journal/writer.js";
import { createWrittenLines } from "../../src/journal/written-lines.js";
import { runSecrets } from "../../src/secrets.js";

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "journal-written-"));
  path = join(dir, "journal.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function writerAndReader() {
  const written = createWrittenLines();
  const writer = await openJournal(path, { secrets: runSecrets([]), appended: written.remember });
  return { writer, reader: holdingReader(path, { written }) };
}

describe("written lines", () => {
  it("the reader returns the writer's own events for lines it finds unchanged, frozen against changes", async () => {
    const { writer, reader } = await writerAndReader();
    const first = writer.append({ type: "USER_MESSAGE", content: "one" });
    const second = writer.append({ type: "THOUGHT", iteration: 1, content: null, tool_calls: [{ id: "c1", name: "ls", arguments: "{}" }], usage: null, model: "m" });
    const events = reader.read();
    expect(events[0]).toBe(first);
    expect(events[1]).toBe(second);
    expect(Object.isFrozen(second)).toBe(true);
    expect(() => (second as { tool_calls: unknown[] }).tool_calls.push({})).toThrow(TypeError);
    writer.close();
  });

  it("a line changed on disk after it was written is parsed from the disk, not taken from memory", async () => {
    const { writer, reader } = await writerAndReader();
    writer.append({ type: "USER_MESSAGE", content: "one" });
    const second = writer.append({ type: "USER_MESSAGE", content: "two" });
    writeFileSync(path, readFileSync(path, "utf8").replace('"two"', '"TWO"'));
    const events = reader.read();
    expect(events[1]).not.toBe(second);
    expect(events[1]).toMatchObject({ seq: 2, content: "TWO" });
    writer.close();
  });

  it("a line that is not valid on disk still fails the read, though this process wrote a valid one", async () => {
    const { writer, reader } = await writerAndReader();
    writer.append({ type: "USER_MESSAGE", content: "one" });
    writeFileSync(path, readFileSync(path, "utf8").replace('"seq":1', '"seq":7'));
    expect(() => reader.read()).toThrow(/seq 7 where 1 was expected/);
    writer.close();
  });
});
