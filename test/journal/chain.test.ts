// The journal's hash chain: where an edit is found (a changed byte, a removed, inserted or reordered line, a cut tail), and journals written before the chain (unchained, or chained from where a newer engine went on).
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chainTip, EMPTY_ANCHOR, hashedLine, splitHashedLine } from "../../src/journal/chain.js";
import { verifyJournalChain, type RecordedEnd } from "../../src/journal/chain-verify.js";

const dir = mkdtempSync(join(tmpdir(), "delta-chain-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** The body of event `seq` as the engine serializes it. */
function body(seq: number, type = "USER_MESSAGE", extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ seq, timestamp: "2026-01-01T00:00:00.000Z", type, content: `message ${seq}`, ...extra });
}

/** Lines of a journal whose events `from`…`to` are chained, the first to `anchor`. */
function chained(from: number, to: number, anchor = EMPTY_ANCHOR): string[] {
  const lines: string[] = [];
  let previous = anchor;
  for (let seq = from; seq <= to; seq += 1) {
    const { line, hash } = hashedLine(body(seq), previous);
    lines.push(line);
    previous = hash;
  }
  return lines;
}

function write(text: string): string {
  files += 1;
  const path = join(dir, `journal-${files}.jsonl`);
  writeFileSync(path, text);
  return path;
}

const journal = (lines: string[]): string => write(lines.map((line) => `${line}\n`).join(""));
const verify = (lines: string[], end: RecordedEnd | null = null) => verifyJournalChain(journal(lines), end);
const messages = (report: ReturnType<typeof verifyJournalChain>) => report.problems.map((problem) => `line ${problem.line}: ${problem.message}`);

describe("a hashed line", () => {
  it("ends with its hash as its last member, the SHA-256 of the hash before it, a newline and the line without its hash", () => {
    const { line, hash } = hashedLine(body(1), EMPTY_ANCHOR);
    expect(line).toBe(`${body(1).slice(0, -1)},"hash":"${hash}"}`);
    expect(JSON.parse(line)).toMatchObject({ seq: 1, hash });
    expect(splitHashedLine(Buffer.from(line))).toEqual({ body: Buffer.from(body(1)), hash });
    expect(EMPTY_ANCHOR).toBe("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("a line whose last member is not the hash carries none", () => {
    expect(splitHashedLine(Buffer.from(body(1)))).toBeNull();
    const { line } = hashedLine(body(1), EMPTY_ANCHOR);
    expect(splitHashedLine(Buffer.from(line.replace('"}', '" }')))).toBeNull();
  });
});

describe("verifying a journal", () => {
  const lines = chained(1, 6);

  it("an untouched journal is intact, its head the last line's hash", () => {
    const report = verify(lines);
    expect(report).toMatchObject({ status: "intact", lines: 6, chainedFrom: 1, problemCount: 0, tornTailBytes: 0 });
    expect(report.head).toBe(JSON.parse(lines[5]!).hash);
  });

  it("a changed byte is found on its line, and only there", () => {
    const edited = [...lines];
    edited[2] = edited[2]!.replace("message 3", "message 8");
    const report = verify(edited);
    expect(report.status).toBe("broken");
    expect(messages(report)).toEqual(["line 3: was changed since it was written (or the hash of the line before it was)"]);
    expect(report.problems[0]).toMatchObject({ seq: 3, type: "USER_MESSAGE" });
  });

  it("a removed line is named by the seq missing before the next one", () => {
    const report = verify([...lines.slice(0, 2), ...lines.slice(3)]);
    expect(messages(report)).toEqual(["line 3: does not follow the line before it (seq 2): seq 3 was removed"]);
  });

  it("reordered and inserted lines are found where they break the chain", () => {
    const swapped = [lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)];
    expect(messages(verify(swapped))).toEqual([
      "line 2: does not follow the line before it (seq 1): seq 2 was removed",
      "line 3: comes after seq 3: lines were reordered or inserted",
      "line 4: does not follow the line before it (seq 2): seq 3 was removed",
    ]);
    const inserted = [...lines.slice(0, 3), hashedLine(body(4, "USER_MESSAGE", { content: "planted" }), JSON.parse(lines[2]!).hash).line, ...lines.slice(3)];
    const report = verify(inserted);
    expect(report.status).toBe("broken");
    expect(messages(report)).toEqual(["line 5: comes after seq 4: lines were reordered or inserted"]);
  });

  it("a line whose hash was removed, after the chain started, is broken", () => {
    const stripped = [...lines.slice(0, 5), body(6)];
    expect(messages(verify(stripped))).toEqual(["line 6: carries no hash, but the chain starts at line 1: it was changed, or written by an engine older than the chain"]);
  });

  it("a tail cut off is found against the end metadata.json recorded; a cut mid-line is a torn tail", () => {
    const whole = lines.map((line) => `${line}\n`).join("");
    const end: RecordedEnd = { bytes: Buffer.byteLength(whole), hash: JSON.parse(lines[5]!).hash };
    expect(verify(lines, end).status).toBe("intact");
    const cut = verify(lines.slice(0, 4), end);
    expect(cut.status).toBe("broken");
    expect(messages(cut)).toEqual([`line 4: the journal ends at byte ${Buffer.byteLength(lines.slice(0, 4).join("\n")) + 1}, but metadata.json recorded ${end.bytes} bytes when its process ended: its tail was cut off`]);
    // A crash mid-write leaves a torn line: not an edit, and the engine cuts it on the next open.
    const torn = verifyJournalChain(write(`${whole}{"seq":7,"timestamp":"2026-`));
    expect(torn).toMatchObject({ status: "intact", lines: 6, tornTailBytes: 27 });
    // A complete line whose newline a crash cut off still counts.
    expect(verifyJournalChain(write(whole.slice(0, -1)))).toMatchObject({ status: "intact", lines: 6, tornTailBytes: 0 });
  });

  it("a journal no line of which carries a hash is unchained, not broken", () => {
    expect(verify([body(1), body(2), body(3)])).toMatchObject({ status: "unchained", lines: 3, chainedFrom: null, head: null, problemCount: 0 });
  });

  it("a journal a newer engine went on with is chained from its first hashed line, which holds the lines before it", () => {
    const older = [body(1), body(2)];
    const anchor = chainTipOf(older);
    const mixed = [...older, ...chained(3, 5, anchor)];
    expect(verify(mixed)).toMatchObject({ status: "intact", chainedFrom: 3, lines: 5 });
    const editedOlder = [body(1).replace("message 1", "message 9"), ...mixed.slice(1)];
    expect(messages(verify(editedOlder))).toEqual(["line 3: is the first line with a hash, which covers the lines before it: they (or this line) changed since it was written"]);
  });
});

describe("the tip a writer chains from", () => {
  it("is the last line's hash, the anchor of the bytes before it when that line has none, and the empty anchor for an empty file", () => {
    const lines = chained(1, 3);
    expect(chainTipOf(lines)).toBe(JSON.parse(lines[2]!).hash);
    expect(chainTipOf([])).toBe(EMPTY_ANCHOR);
    const older = [body(1), body(2)];
    expect(chainTipOf(older)).not.toBe(EMPTY_ANCHOR);
    // What a writer then chains verifies.
    expect(verify([...older, ...chained(3, 3, chainTipOf(older))]).status).toBe("intact");
  });
});

/** chainTip of a journal holding `lines`. */
function chainTipOf(lines: string[]): string {
  const path = journal(lines);
  const fd = openSync(path, "r");
  try {
    return chainTip(fd, readFileSync(path).length);
  } finally {
    closeSync(fd);
  }
}
