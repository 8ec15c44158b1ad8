// A run's files hold whole conversations: only their owner may read them; and a dangling symlink is not a run.
import { mkdirSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { collectFiles, delta, modelEnv, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-run-files-");
let agent: string;
let server: MockLlm;
beforeAll(async () => {
  agent = writeAgent(root);
  server = await serve((request) =>
    toolResultsOf(request).length === 0
      ? reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }])
      : toolResultsOf(request).length === 1
        ? reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Password?", input_type: "password" } }])
        : reply.text("done"),
  );
});

/** `dir` and every directory below it. */
function directoriesUnder(dir: string): string[] {
  return [dir, ...readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).flatMap((entry) => directoriesUnder(join(dir, entry.name)))];
}

describe("the files of a run", () => {
  it("are created 0700 (directories) and 0600 (files), a sensitive answer's included, under the usual umask", async () => {
    const ws = join(root, "private");
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "p1", "-m", "go"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(101);
    expect((await delta(["continue", "--run-id", "p1", "-w", ws, "-m", "hunter2-secret"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(0);
    const dir = runDir(ws, "p1");
    const modes = (paths: string[]): Record<string, string> => Object.fromEntries(paths.map((path) => [relative(dir, path) || ".", (statSync(path).mode & 0o777).toString(8)]));
    const files = collectFiles(dir);
    expect(files.map((file) => relative(dir, file))).toEqual(expect.arrayContaining(["journal.jsonl", "metadata.json", "engine.log", ".lock/2.json"]));
    expect(Object.values(modes(files)).every((mode) => mode === "600"), JSON.stringify(modes(files))).toBe(true);
    expect(Object.values(modes(directoriesUnder(dir))).every((mode) => mode === "700"), JSON.stringify(modes(directoriesUnder(dir)))).toBe(true);
  });
});

describe("a dangling symlink where a run directory would be", () => {
  it("is refused with 126 by run and by continue, saying what it is", async () => {
    const ws = join(root, "dangling");
    mkdirSync(join(ws, ".delta"), { recursive: true });
    symlinkSync(join(root, "nowhere"), join(ws, ".delta", "d1"));
    for (const args of [["run", "--agent", agent, "-w", ws, "--run-id", "d1", "-m", "go"], ["continue", "--run-id", "d1", "-w", ws]]) {
      const refused = await delta(args, { env: modelEnv(server.baseUrl) });
      expect(refused.exitCode, refused.stderr).toBe(126);
      expect(refused.stderr).toMatch(/d1 exists but is not a run directory \(a dangling symlink, or a file\); remove it/);
    }
  });
});
