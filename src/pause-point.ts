// Named pause points that let race tests stop the engine at an exact line: DELTA_TEST_PAUSE_AT=<point>[,<point>…].
//
// At a listed point the process writes `<DELTA_TEST_PAUSE_DIR>/<point>.<pid>.reached`, then stands still (its event
// loop blocked, as if SIGSTOP had landed on that line) until `<point>.go` appears in the same directory. A point may
// name a detail after a colon (`journal-append:ACTION_RESULT` pauses only before that event type). Unset, as in every
// real run, a pause point costs one comparison.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * continue-before-lock: `continue`, before it takes the run's lock (and reads anything the lock protects).
 * lock-judged: after judging the previous holder, before claiming the run.
 * lock-held: right after the run's lock was taken.
 * journal-append: in the journal writer, after its ownership checks and before the write.
 * prune-judged: `delta prune`, after choosing a run (detail: its id) and before taking it to remove it.
 * folder-file-resolved: the safe open of a workspace's or agent's file (detail: its name), after its links were resolved and checked, before it is opened.
 * build-write: scripts/build.mjs, a file of dist/ written beside its place, before it replaces the old one (detail: its name).
 * ledger-change-computed: a budget ledger's reservation, computed from the state it read, before it is committed.
 * batch-accepted: `batch submit`, after the provider accepted a batch and before its id is journaled.
 * mcp-before-initialize: an MCP server started (its process spawned, for stdio), before the engine sends it initialize.
 */
export type PausePoint = "continue-before-lock" | "lock-judged" | "lock-held" | "journal-append" | "prune-judged" | "folder-file-resolved" | "build-write" | "ledger-change-computed" | "batch-accepted" | "mcp-before-initialize";

const wanted = process.env.DELTA_TEST_PAUSE_AT?.split(",");
const POLL_MS = 10;

export function pausePoint(point: PausePoint, detail?: string): void {
  if (wanted === undefined) return;
  const name = wanted.find((entry) => entry === point || (detail !== undefined && entry === `${point}:${detail}`));
  if (name === undefined) return;
  const dir = process.env.DELTA_TEST_PAUSE_DIR ?? ".";
  writeFileSync(join(dir, `${name}.${process.pid}.reached`), "");
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(join(dir, `${name}.go`))) Atomics.wait(sleeper, 0, 0, POLL_MS);
}
