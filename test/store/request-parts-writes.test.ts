// request-parts.jsonl is appended like the journal: a write the disk cuts short or refuses leaves no fragment for the next line to be glued to.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { disk } from "../support/short-writes.js";
import type { LlmRequest } from "../../src/conversation.js";
import { openRequestParts, readRequestParts, rebuildRequest, requestPartsPath } from "../../src/store/request-parts.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";

vi.mock("node:fs", async () => (await import("../support/short-writes.js")).fsWithShortWrites());

let workDir: string;
let paths: RunPaths;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "request-parts-writes-"));
  paths = stageRunDir(workDir, parseRunId("r1")).publish();
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const request = (text: string): LlmRequest => ({ model: "m", messages: [{ role: "user", content: text }], tools: [], params: {} });

describe("request parts on a disk that refuses a write part-way", () => {
  it("cut the fragment and fail naming the file, so the next request's parts start on a line of their own", () => {
    const parts = openRequestParts(paths, []);
    parts.store(request("first"));
    disk.shortWrites = 1;
    expect(() => parts.store(request("second"))).toThrow(/request parts .*request-parts\.jsonl.*no space left/i);
    const ref = parts.store(request("third"));
    parts.close();

    const lines = readFileSync(requestPartsPath(paths), "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    for (const line of lines.slice(0, -1)) expect(() => JSON.parse(line)).not.toThrow();
    expect(rebuildRequest(ref, readRequestParts(paths), "record")).toEqual(request("third"));
  });
});
