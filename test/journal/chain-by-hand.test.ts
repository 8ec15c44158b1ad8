// The hash chain checked by hand, with the sh/sed/sha256sum recipe docs/runs.md gives: it agrees with the engine's rule on lines holding every kind of character.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EMPTY_ANCHOR, hashedLine } from "../../src/journal/chain.js";
import { REPO } from "../e2e/harness.js";

const dir = mkdtempSync(join(tmpdir(), "delta-chain-by-hand-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The ```sh block of docs/runs.md that checks a journal by hand. */
function recipe(): string {
  const docs = readFileSync(join(REPO, "docs", "runs.md"), "utf8");
  const block = /```sh\n(# Checks the hash chain of journal\.jsonl[\s\S]*?)```/.exec(docs);
  if (block === null) throw new Error("docs/runs.md has no sh block checking the hash chain");
  return block[1]!;
}

/** Runs the recipe in a folder holding `journal` as journal.jsonl; its output. */
function byHand(journal: string): string {
  const folder = mkdtempSync(join(dir, "run-"));
  writeFileSync(join(folder, "journal.jsonl"), journal);
  return execFileSync("sh", ["-c", recipe()], { cwd: folder, encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C.UTF-8" } });
}

// What a model, a tool or a path can put in a line: quotes, backslashes, escapes, non-ASCII, a percent sign for printf.
const CONTENTS = ['plain', 'a "quoted" \\ back\\slash', "tab\tnew\nline \u001b[31m", "héllo 東京 🙂 %s %d \u2028", "ends with a backslash \\"];

function chainedLines(contents: readonly string[], anchor = EMPTY_ANCHOR, firstSeq = 1): string[] {
  let previous = anchor;
  return contents.map((content, index) => {
    const { line, hash } = hashedLine(JSON.stringify({ seq: firstSeq + index, timestamp: "2026-01-01T00:00:00.000Z", type: "USER_MESSAGE", content }), previous);
    previous = hash;
    return line;
  });
}

describe("the chain checked by hand", () => {
  it("holds on every line the engine's rule hashed, whatever characters they carry", () => {
    expect(byHand(`${chainedLines(CONTENTS).join("\n")}\n`)).toBe("");
  });

  it("names the line that was changed", () => {
    const lines = chainedLines(CONTENTS);
    lines[2] = lines[2]!.replace("tab", "TAB");
    expect(byHand(`${lines.join("\n")}\n`)).toBe("line 3 does not hold\n");
  });

  it("holds on a journal an older engine began, chained from the digest of the lines before", () => {
    const older = ['{"seq":1,"type":"ENGINE_START"}', '{"seq":2,"type":"USER_MESSAGE","content":"task"}'];
    const anchor = `sha256:${execFileSync("sha256sum", { input: `${older.join("\n")}\n`, encoding: "utf8" }).slice(0, 64)}`;
    expect(byHand(`${[...older, ...chainedLines(CONTENTS, anchor, 3)].join("\n")}\n`)).toBe("");
  });
});
