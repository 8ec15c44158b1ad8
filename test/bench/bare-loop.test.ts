// The benchmark's bare loop: plain, it appends two lines a turn to one file; with --run-files it writes a run's files as a durable run does each turn.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startModelServer, type ModelServer } from "../../bench/lib/model-server.mjs";

const BARE_LOOP = join(import.meta.dirname, "../../bench/lib/bare-loop.mjs");
const run = promisify(execFile);

let server: ModelServer;
const dir = mkdtempSync(join(tmpdir(), "delta-bare-loop-"));
beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string): unknown[] => readFileSync(file, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as unknown);

it("appends the model's message and the tool's output each turn, and ends on the model's text", async () => {
  const file = join(dir, "plain.jsonl");
  await run(process.execPath, [BARE_LOOP, server.baseUrl, "3", "plain", file]);
  expect(server.arrivals("plain")).toHaveLength(3);
  // Two tool calls and their outputs, then the final text.
  expect(lines(file)).toHaveLength(5);
  expect(lines(file)[1]).toEqual({ output: "1/3\n" });
});

it("with --run-files, writes each call's and each tool's record as its own private file, the journal and engine.log", async () => {
  const folder = join(dir, "files");
  await run(process.execPath, [BARE_LOOP, server.baseUrl, "3", "files", folder, "--run-files"]);
  expect(server.arrivals("files")).toHaveLength(3);
  expect(readdirSync(join(folder, "io", "invocations")).sort()).toEqual(["1.json", "2.json", "3.json", "request-parts.jsonl"]);
  expect(readdirSync(join(folder, "io", "tool_executions")).sort()).toEqual(["1_echo.json", "2_echo.json"]);
  expect(statSync(join(folder, "io", "tool_executions", "2_echo.json")).mode & 0o777).toBe(0o600);
  expect(JSON.parse(readFileSync(join(folder, "io", "tool_executions", "2_echo.json"), "utf8"))).toMatchObject({ stdout: "2/3\n" });
  // THOUGHT, ACTION_REQUEST and ACTION_RESULT for each tool call, and the final THOUGHT.
  expect(lines(join(folder, "journal.jsonl")).map((event) => (event as { type: string }).type)).toEqual([
    "THOUGHT",
    "ACTION_REQUEST",
    "ACTION_RESULT",
    "THOUGHT",
    "ACTION_REQUEST",
    "ACTION_RESULT",
    "THOUGHT",
  ]);
  expect(readFileSync(join(folder, "engine.log"), "utf8").trimEnd().split("\n")).toHaveLength(3 + 2 * 4);
  expect(statSync(join(folder, "owner.json")).size).toBe(1024);
});
