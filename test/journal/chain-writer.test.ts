// The journal writer keeps the chain through everything that writes a journal: a new run, a continue, secrets redacted, a takeover's fencing copy, a torn tail cut, a lost newline restored (a write the disk refuses part-way: jsonl-appender.test.ts).
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EMPTY_ANCHOR } from "../../src/journal/chain.js";
import { verifyJournalChain } from "../../src/journal/chain-verify.js";
import type { NewEvent } from "../../src/journal/events.js";
import { openJournal } from "../../src/journal/writer.js";
import { runSecrets } from "../../src/secrets.js";
import { fenceJournal } from "../../src/store/lease/fence.js";

const dir = mkdtempSync(join(tmpdir(), "delta-chain-writer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let journals = 0;
const newPath = (): string => join(dir, `journal-${(journals += 1)}.jsonl`);

const message = (content: string): NewEvent => ({ type: "USER_MESSAGE", content });

/** Opens the journal at `path` as a process holding the run does, appends `contents` as messages, and closes it. */
async function appendAll(path: string, contents: string[], secrets: string[] = []): Promise<void> {
  const writer = await openJournal(path, { secrets: runSecrets(secrets) });
  for (const content of contents) writer.append(message(content));
  writer.sync();
  writer.close();
}

describe("the writer's chain", () => {
  it("starts a new journal at the empty anchor and hashes every line, its head the last line's hash", async () => {
    const path = newPath();
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    const first = writer.append(message("one"));
    const second = writer.append(message("two"));
    expect(writer.head()).toBe(second.hash);
    writer.close();
    expect(verifyJournalChain(path)).toMatchObject({ status: "intact", lines: 2, chainedFrom: 1, head: second.hash });
    expect(first.hash).not.toBe(EMPTY_ANCHOR);
    // The event it hands back is the one read back from the file: the hash is its last member.
    expect(JSON.parse(readFileSync(path, "utf8").split("\n")[1]!)).toEqual(second);
  });

  it("goes on from the last line's hash when a later process continues the run", async () => {
    const path = newPath();
    await appendAll(path, ["one", "two"]);
    await appendAll(path, ["three"]);
    expect(verifyJournalChain(path)).toMatchObject({ status: "intact", lines: 3 });
  });

  it("hashes the line as written, secrets already replaced", async () => {
    const path = newPath();
    await appendAll(path, ["the key is sk-live-0123456789abcdef"], ["sk-live-0123456789abcdef"]);
    expect(readFileSync(path, "utf8")).toContain("[REDACTED]");
    expect(verifyJournalChain(path).status).toBe("intact");
  });

  it("keeps the chain across a takeover's fencing copy", async () => {
    const path = newPath();
    await appendAll(path, ["held by the first process"]);
    fenceJournal(path);
    await appendAll(path, ["written by the process that took the run over"]);
    expect(verifyJournalChain(path)).toMatchObject({ status: "intact", lines: 2 });
  });

  it("cuts a torn tail and chains the next event to the last complete line", async () => {
    const path = newPath();
    await appendAll(path, ["one", "two"]);
    const torn = '{"seq":3,"timestamp":"2026-01-01T00:';
    appendFileSync(path, torn);
    expect(verifyJournalChain(path)).toMatchObject({ status: "intact", tornTailBytes: torn.length });
    await appendAll(path, ["three, after the crash"]);
    expect(verifyJournalChain(path)).toMatchObject({ status: "intact", lines: 3, tornTailBytes: 0 });
  });

  it("terminates a complete line whose newline a crash cut off, and chains to it", async () => {
    const path = newPath();
    await appendAll(path, ["one", "two"]);
    writeFileSync(path, readFileSync(path, "utf8").slice(0, -1));
    await appendAll(path, ["three"]);
    expect(verifyJournalChain(path)).toMatchObject({ status: "intact", lines: 3 });
  });

  it("chains a journal an older engine wrote from the digest of its bytes", async () => {
    const path = newPath();
    writeFileSync(path, `${JSON.stringify({ seq: 1, timestamp: "2026-01-01T00:00:00.000Z", type: "USER_MESSAGE", content: "older" })}\n`);
    await appendAll(path, ["newer"]);
    expect(verifyJournalChain(path)).toMatchObject({ status: "intact", chainedFrom: 2, lines: 2 });
  });
});
