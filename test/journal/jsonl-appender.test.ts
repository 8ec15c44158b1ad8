// The one appender of a run's JSONL files: a torn tail cut once, a complete unterminated line terminated, every write whole or undone.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { disk } from "../support/short-writes.js";
import { verifyJournalChain } from "../../src/journal/chain-verify.js";
import { openJsonlAppender } from "../../src/journal/jsonl-appender.js";
import { openJournal } from "../../src/journal/writer.js";
import { runSecrets } from "../../src/secrets.js";

vi.mock("node:fs", async () => (await import("../support/short-writes.js")).fsWithShortWrites());

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jsonl-appender-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("openJsonlAppender", () => {
  it("keeps what its owner says stands of the file and cuts the rest before the first append", () => {
    const path = join(dir, "parts.jsonl");
    writeFileSync(path, '{"n":1}\n{"n":2,"torn');
    const seen: number[] = [];
    const file = openJsonlAppender(path, "the parts", (_fd, size) => {
      seen.push(size);
      return { bytes: 8 };
    });
    file.append(Buffer.from('{"n":2}\n'));
    file.close();
    expect(seen).toEqual([20]);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":2}\n');
  });

  it("terminates a complete last line its owner keeps, so the next one starts on its own line", () => {
    const path = join(dir, "parts.jsonl");
    writeFileSync(path, '{"n":1}');
    const file = openJsonlAppender(path, "the parts", (_fd, size) => ({ bytes: size, terminate: true }));
    file.append(Buffer.from('{"n":2}\n'));
    file.close();
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":2}\n');
  });

  it("writes what a short write left out, and cuts off the fragment of a write the disk refuses part-way", () => {
    const path = join(dir, "parts.jsonl");
    const file = openJsonlAppender(path, "the parts", () => ({ bytes: 0 }));
    file.append(Buffer.from('{"n":1}\n'));
    disk.shortWrites = 1;
    expect(() => file.append(Buffer.from(`{"n":2,"text":"${"x".repeat(100)}"}\n`))).toThrow(/Cannot append to the parts .*parts\.jsonl.*no space left/);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n');
    expect(file.size).toBe(8);
    file.append(Buffer.from('{"n":3}\n'));
    file.close();
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n{"n":3}\n');
  });
});

describe("the journal through the appender", () => {
  it("a write the disk refuses part-way leaves the journal as it was, and the next event takes the seq the refused one did not", async () => {
    const path = join(dir, "journal.jsonl");
    const journal = await openJournal(path, { secrets: runSecrets([]) });
    journal.append({ type: "USER_MESSAGE", content: "first" });
    const before = readFileSync(path, "utf8");
    disk.shortWrites = 1;
    expect(() => journal.append({ type: "USER_MESSAGE", content: "refused" })).toThrow(/Cannot append to the journal .*no space left/);
    expect(readFileSync(path, "utf8")).toBe(before);
    const next = journal.append({ type: "USER_MESSAGE", content: "second" });
    journal.close();
    expect(next.seq).toBe(2);
    expect(readFileSync(path, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line).content)).toEqual(["first", "second"]);
    // The refused event's hash was never the head: the next event chains to the last one written.
    expect(verifyJournalChain(path).status).toBe("intact");
  });

  it("reopened after a crash mid-line, cuts the torn line and goes on from the last whole event", async () => {
    const path = join(dir, "journal.jsonl");
    const first = await openJournal(path, { secrets: runSecrets([]) });
    first.append({ type: "USER_MESSAGE", content: "kept" });
    first.close();
    appendFileSync(path, '{"seq":2,"timestamp":"2025-01-01T00:00:00.000Z","type":"USER_MES');
    const warnings: string[] = [];
    const second = await openJournal(path, { secrets: runSecrets([]), warn: (line) => warnings.push(line) });
    expect(second.append({ type: "USER_MESSAGE", content: "after" }).seq).toBe(2);
    second.close();
    expect(warnings).toEqual([expect.stringContaining("cut off a torn last line")]);
    expect(readFileSync(path, "utf8").trimEnd().split("\n")).toHaveLength(2);
  });
});
