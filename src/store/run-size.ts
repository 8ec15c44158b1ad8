// What a run folder holds on disk: bytes of its journal, of io/ and in all, counted without following symbolic links.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runPaths } from "./run-dir.js";
import type { RunId } from "./run-id.js";

export interface RunSize {
  journal_bytes: number;
  /** io/invocations, io/tool_executions, io/hooks: what `delta prune --io-only` removes. */
  io_bytes: number;
  total_bytes: number;
}

export function runSize(workDir: string, runId: RunId): RunSize {
  const paths = runPaths(workDir, runId);
  return { journal_bytes: fileBytes(paths.journal), io_bytes: treeBytes(join(paths.runDir, "io")), total_bytes: treeBytes(paths.runDir) };
}

function fileBytes(path: string): number {
  try {
    return lstatSync(path).size;
  } catch {
    return 0;
  }
}

function treeBytes(dir: string): number {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? treeBytes(path) : fileBytes(path);
  }
  return total;
}

