// The folder rows' measure: a run folder's bytes divided by what it must hold anyway, its journal and its tools' outputs.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Bytes under `dir`, symbolic links not followed; 0 when it does not exist. */
export function treeBytes(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  return entries.reduce((sum, entry) => sum + (entry.isDirectory() ? treeBytes(join(dir, entry.name)) : lstatSync(join(dir, entry.name)).size), 0);
}

/** { folder, journal, toolOutputs, invocations, ratio } of the run folder `runDir`. */
export function folderRatio(runDir) {
  const folder = treeBytes(runDir);
  const journal = lstatSync(join(runDir, "journal.jsonl")).size;
  const toolOutputs = treeBytes(join(runDir, "io", "tool_executions"));
  const invocations = treeBytes(join(runDir, "io", "invocations"));
  return { folder, journal, toolOutputs, invocations, ratio: folder / (journal + toolOutputs) };
}
