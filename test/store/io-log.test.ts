import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngineLogger, createInvocationLog, writeHookRecord, writeToolExecution } from "../../src/store/io-log.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";

let workDir: string;
let paths: RunPaths;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "store-io-"));
  paths = stageRunDir(workDir, parseRunId("r1")).publish();
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const reply = { content: "done", tool_calls: [], usage: null, model: "m", finish_reason: "stop" };

describe("io logs", () => {
  it("names invocation records by time and zero-padded iteration and pretty-prints them", () => {
    const invocation = { iteration: 7, timestamp: "2025-01-01T00:00:00.000Z", request: { model: "m", messages: [], tools: [], params: {} }, reply, duration_ms: 3 };
    const file = createInvocationLog(paths, "full").write(invocation);
    expect(basename(file)).toMatch(/^\d{8}T\d{9}Z_0007\.json$/);
    expect(readFileSync(file, "utf8")).toBe(`${JSON.stringify(invocation, null, 2)}\n`);
  });

  it("keeps every record written in the same millisecond", () => {
    for (let i = 0; i < 20; i += 1) writeToolExecution(paths, { tool_name: "ls", n: i });
    const files = readdirSync(paths.toolExecutionsDir);
    expect(files).toHaveLength(20);
    const numbers = files.map((file) => JSON.parse(readFileSync(join(paths.toolExecutionsDir, file), "utf8")).n).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("keeps a hostile tool name inside the directory", () => {
    const file = writeToolExecution(paths, { tool_name: "../../x y" });
    expect(file.startsWith(paths.toolExecutionsDir)).toBe(true);
    expect(basename(file)).toMatch(/^\d{8}T\d{9}Z_______x_y\.json$/);
  });

  it("names hook records by hook then time", () => {
    const file = writeHookRecord(paths, "pre_tool_execution", { exit_code: 0 });
    expect(file.startsWith(paths.hooksDir)).toBe(true);
    expect(basename(file)).toMatch(/^pre_tool_execution_\d{8}T\d{9}Z\.json$/);
  });

  it("redacts secret values, escaped or not, and authorization headers", () => {
    const secret = 'sk-"live"-123';
    const request = { model: "m", messages: [{ role: "user" as const, content: `key=${secret}` }], tools: [], params: { headers: { Authorization: "Bearer other" } } };
    const file = createInvocationLog(paths, "full", [secret]).write({ iteration: 1, timestamp: "t", request, reply, duration_ms: 1 });
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("live");
    expect(text).not.toContain("Bearer other");
    expect(text).toContain("[REDACTED]");
  });
});

describe("engine.log", () => {
  it("appends timestamped lines, after those of an earlier logger", () => {
    const logger = createEngineLogger(paths);
    logger.log("first");
    logger.log("second");
    logger.close();
    const later = createEngineLogger(paths);
    later.log("third");
    later.close();
    const lines = readFileSync(paths.engineLog, "utf8").trimEnd().split("\n");
    expect(lines.map((line) => line.replace(/^\S+ /, ""))).toEqual(["first", "second", "third"]);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z first$/);
  });
});
