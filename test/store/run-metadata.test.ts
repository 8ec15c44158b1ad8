import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EngineError, RunRefusedError } from "../../src/errors.js";
import { readMetadata, writeMetadata, type RunMetadata } from "../../src/store/run-metadata.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";

let workDir: string;
let paths: RunPaths;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "store-metadata-"));
  paths = stageRunDir(workDir, parseRunId("r1")).publish();
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const metadata = (overrides: Partial<RunMetadata> = {}): RunMetadata => ({
  run_id: "r1",
  workspace_id: "W001",
  agent_name: "reviewer",
  status: "RUNNING",
  created_at: "2025-10-13T14:35:22.123Z",
  updated_at: "2025-10-13T14:35:22.123Z",
  end_time: null,
  initial_message: "Review auth.ts",
  iterations: 0,
  max_iterations: 30,
  error: null,
  agent_home: "/agents/reviewer",
  work_dir: workDir,
  pid: process.pid,
  hostname: "host-a",
  start_time_unix: 1697207722123,
  process_name: "node",
  ...overrides,
});

describe("metadata.json", () => {
  it("round-trips through write and read", () => {
    writeMetadata(paths, metadata({ iterations: 3 }));
    expect(readMetadata(paths)).toEqual(metadata({ iterations: 3 }));
  });

  it("replaces the file whole and leaves no temporary files behind", () => {
    writeMetadata(paths, metadata());
    writeMetadata(paths, metadata({ status: "COMPLETED", end_time: "2025-10-13T15:00:00.000Z" }), { durable: true });
    expect(JSON.parse(readFileSync(paths.metadata, "utf8")).status).toBe("COMPLETED");
    expect(readdirSync(paths.runDir).filter((name) => name.startsWith("metadata"))).toEqual(["metadata.json"]);
  });

  it("refuses to write metadata that breaks its schema", () => {
    expect(() => writeMetadata(paths, metadata({ iterations: -1 }))).toThrow(EngineError);
  });

  it("names the file and field when metadata on disk is invalid", () => {
    writeMetadata(paths, metadata());
    const onDisk = JSON.parse(readFileSync(paths.metadata, "utf8"));
    writeFileSync(paths.metadata, JSON.stringify({ ...onDisk, status: "DONE" }));
    expect(() => readMetadata(paths)).toThrow(RunRefusedError);
    expect(() => readMetadata(paths)).toThrow(`${paths.metadata}: field "status"`);
  });

  it("names the file when it is not JSON or missing", () => {
    writeFileSync(paths.metadata, "{");
    expect(() => readMetadata(paths)).toThrow(`${paths.metadata} is not valid JSON`);
    rmSync(paths.metadata);
    expect(() => readMetadata(paths)).toThrow(paths.metadata);
  });
});
