// request-parts.jsonl is appended like the journal: a write the disk cuts short or refuses leaves no fragment for the next line to be glued to.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LlmRequest } from "../../src/conversation.js";
import { openRequestParts, readRequestParts, rebuildRequest, requestPartsPath } from "../../src/store/request-parts.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";

/** Armed by a test: the next write to a file is cut short after half its bytes, and the write of the rest fails with ENOSPC. */
const disk = vi.hoisted(() => ({ shortWrites: 0 }));

vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  let refusing = false;
  const writeSync = (fd: number, data: string | NodeJS.ArrayBufferView, ...rest: unknown[]): number => {
    if (refusing) {
      refusing = false;
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
    }
    if (disk.shortWrites > 0) {
      disk.shortWrites -= 1;
      refusing = true;
      const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      const offset = typeof rest[0] === "number" ? rest[0] : 0;
      const length = typeof rest[1] === "number" ? rest[1] : bytes.length - offset;
      return fs.writeSync(fd, bytes, offset, Math.max(1, Math.floor(length / 2)));
    }
    return (fs.writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
  };
  return { ...fs, default: { ...fs, writeSync }, writeSync };
});

let workDir: string;
let paths: RunPaths;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "request-parts-writes-"));
  paths = stageRunDir(workDir, "r1").publish();
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
