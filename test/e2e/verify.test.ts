// `delta verify` on real runs: intact as the engine wrote it, broken where a byte changed or the tail was cut, unchained for an old engine's journal, and chained from where this engine went on with it.
import { execa } from "execa";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startMockLlm, type MockLlm } from "../support/mock-llm.js";
import { CRASH_TRACE, DELTA_BIN, REPO, delta, modelEnv, removeDir, runDir, tempDir, writeAgent } from "./harness.js";

let root: string;
let server: MockLlm;
beforeAll(() => {
  root = tempDir("delta-verify-");
});
afterAll(() => removeDir(root));
afterEach(async () => {
  await server?.close();
});

const journalOf = (ws: string, runId: string): string => join(runDir(ws, runId), "journal.jsonl");

async function verify(ws: string, runId: string) {
  const result = await delta(["verify", runId, "-w", ws, "--format", "json"]);
  expect(result.stderr).not.toMatch(CRASH_TRACE);
  return { exitCode: result.exitCode, verdict: JSON.parse(result.stdout) as Record<string, unknown> & { problems: { line: number; message: string }[] } };
}

describe("delta verify", () => {
  it("says a journal as the engine wrote it is intact, finds a changed byte on its line and a tail cut off, in text and JSON", async () => {
    server = await startMockLlm([reply.toolCalls([{ name: "echo", arguments: { text: "a" } }]), reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-verify");
    const ws = join(root, "ws-verify");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "v1", "-m", "echo a", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = readFileSync(journalOf(ws, "v1"), "utf8").split("\n").filter(Boolean);
    expect(lines.every((line) => /,"hash":"sha256:[0-9a-f]{64}"\}$/.test(line))).toBe(true);

    const intact = await verify(ws, "v1");
    expect(intact.exitCode).toBe(0);
    expect(intact.verdict).toMatchObject({ status: "intact", lines: lines.length, chained_from: 1, head: JSON.parse(lines.at(-1)!).hash, problem_count: 0 });
    expect(intact.verdict.recorded_end).toEqual({ bytes: Buffer.byteLength(`${lines.join("\n")}\n`), hash: JSON.parse(lines.at(-1)!).hash });
    const text = await delta(["verify", "v1", "-w", ws]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/^Journal of run v1: intact — not edited since it was written\n/);

    // The tool's output, edited after the fact.
    const resultLine = lines.findIndex((line) => line.includes('"ACTION_RESULT"'));
    const edited = [...lines];
    edited[resultLine] = edited[resultLine]!.replace('"observation_content":"a\\n"', '"observation_content":"b\\n"');
    expect(edited[resultLine]).not.toBe(lines[resultLine]);
    writeFileSync(journalOf(ws, "v1"), `${edited.join("\n")}\n`);
    const broken = await verify(ws, "v1");
    expect(broken.exitCode).toBe(1);
    expect(broken.verdict).toMatchObject({ status: "broken", problem_count: 1 });
    expect(broken.verdict.problems[0]).toMatchObject({ line: resultLine + 1, type: "ACTION_RESULT", message: "was changed since it was written (or the hash of the line before it was)" });
    const brokenText = await delta(["verify", "v1", "-w", ws]);
    expect(brokenText.exitCode).toBe(1);
    expect(brokenText.stdout).toContain(`line ${resultLine + 1} (seq ${resultLine + 1}, ACTION_RESULT): was changed since it was written`);

    // The ENGINE_END cut off: the chain that is left holds, but metadata.json recorded a longer journal.
    writeFileSync(journalOf(ws, "v1"), `${lines.slice(0, -1).join("\n")}\n`);
    const cut = await verify(ws, "v1");
    expect(cut.exitCode).toBe(1);
    expect(cut.verdict.problems.map((problem) => problem.message)).toEqual([expect.stringMatching(/but metadata\.json recorded \d+ bytes when its process ended: its tail was cut off/)]);
  });

  it("colours its verdict on a terminal as colour, never as escaped text, and not with NO_COLOR", async () => {
    server = await startMockLlm([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-colour");
    const ws = join(root, "ws-colour");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "c1", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    // script(1) gives the command a pseudo-terminal as stdout.
    const onTerminal = (env: Record<string, string>) =>
      execa("script", ["-qec", `${process.execPath} ${DELTA_BIN} verify c1 -w ${ws}`, "/dev/null"], { env: { ...env, TERM: "xterm" }, reject: false, stdin: "ignore" });
    const coloured = await onTerminal({ NO_COLOR: "" });
    expect(coloured.exitCode, coloured.stderr).toBe(0);
    expect(coloured.stdout).toContain("\u001b[32mintact\u001b[39m");
    expect(coloured.stdout).not.toContain("\\x1b");
    const plain = await onTerminal({ NO_COLOR: "1" });
    expect(plain.stdout).toContain("Journal of run c1: intact");
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("calls an older engine's journal unchained (exit 2), and verifies it from where this engine's continue starts the chain", async () => {
    const fixture = join(REPO, "test/fixtures/runs/old-format-run");
    const copy = join(root, "old");
    cpSync(fixture, copy, { recursive: true });
    const ws = join(copy, "work");
    const journal = journalOf(ws, "old-format-run");
    const origin = readFileSync(join(fixture, "ORIGIN"), "utf8").trim();
    const [first, ...rest] = readFileSync(journal, "utf8").split("\n");
    writeFileSync(journal, [first!.split(origin).join(copy), ...rest].join("\n"));
    const olderLines = readFileSync(journal, "utf8").split("\n").filter(Boolean).length;

    const unchained = await verify(ws, "old-format-run");
    expect(unchained.exitCode).toBe(2);
    expect(unchained.verdict).toMatchObject({ status: "unchained", chained_from: null, lines: olderLines, problem_count: 0 });

    server = await startMockLlm([reply.text("done")]);
    const continued = await delta(["continue", "--run-id", "old-format-run", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(continued.exitCode, continued.stderr).toBe(0);
    const mixed = await verify(ws, "old-format-run");
    expect(mixed.exitCode).toBe(0);
    expect(mixed.verdict).toMatchObject({ status: "intact", chained_from: olderLines + 1 });

    // The chain holds the older lines too: an edit of one is found at the first hashed line.
    const lines = readFileSync(journal, "utf8").split("\n");
    lines[1] = lines[1]!.replace("Echo two words", "Echo ten words");
    writeFileSync(journal, lines.join("\n"));
    const editedOlder = await verify(ws, "old-format-run");
    expect(editedOlder.exitCode).toBe(1);
    expect(editedOlder.verdict.problems[0]).toMatchObject({ line: olderLines + 1, message: expect.stringMatching(/^is the first line with a hash, which covers the lines before it/) });
  });
});
