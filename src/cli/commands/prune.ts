// `delta prune`: lists (by default) or removes (--yes) finished runs of a workspace or of an agent's workspaces, or only their io/.
import { EXIT, UsageError } from "../../errors.js";
import { listScopedLeftovers, listScopedRuns } from "../../store/locate-run.js";
import { PRUNABLE, choosePrunable, pruneLeftover, pruneRun, type PruneRule } from "../../store/prune.js";
import { humanBytes } from "../../byte-size.js";
import type { CliIo } from "../io.js";
import { optionalString, parseFormat, parseStatus } from "../options.js";
import { runScope } from "../run-scope.js";

export async function pruneCommand(flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format, ["text", "json"]);
  const rule = pruneRule(flags);
  const scope = await runScope(flags);
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const { chosen, skipped } = choosePrunable(listScopedRuns(scope, {}, warn), rule);
  // Folders a removed run left (owner records only) are no run of any status: they go with any prune.
  const leftovers = listScopedLeftovers(scope);
  const what = rule.ioOnly ? "io/ of" : "run";
  const removed: string[] = [];
  const removedLeftovers: string[] = [];
  const left = skipped.map(({ run, reason }) => ({ run_id: run.run_id, work_dir: run.work_dir, reason }));
  if (flags.yes) {
    for (const candidate of chosen) {
      const reason = await pruneRun(candidate, rule);
      if (reason === null) removed.push(candidate.run.run_id);
      else left.push({ run_id: candidate.run.run_id, work_dir: candidate.run.work_dir, reason });
    }
    for (const { workDir, runId } of leftovers) {
      const reason = await pruneLeftover(workDir, runId);
      if (reason === null) removedLeftovers.push(runId);
      else left.push({ run_id: runId, work_dir: workDir, reason });
    }
  }
  const bytes = chosen.filter((candidate) => !flags.yes || removed.includes(candidate.run.run_id)).reduce((sum, candidate) => sum + candidate.bytes, 0);
  if (format === "json") {
    const leftoverList = leftovers.map(({ workDir, runId }) => ({ run_id: runId, work_dir: workDir, removed: removedLeftovers.includes(runId) }));
    io.data(`${JSON.stringify({ dry_run: !flags.yes, io_only: rule.ioOnly, selected: chosen.map(({ run, bytes: size }) => ({ run_id: run.run_id, work_dir: run.work_dir, status: run.status, last_updated: run.last_updated, bytes: size })), removed, left, bytes, leftovers: leftoverList }, null, 2)}\n`);
  } else {
    for (const { run, bytes: size } of chosen) {
      const done = removed.includes(run.run_id);
      if (flags.yes && !done) continue;
      io.out(`${flags.yes ? "removed" : "would remove"} ${what} ${run.run_id}  ${run.status}  ${run.last_updated}  ${humanBytes(size)}  ${run.work_dir}\n`);
    }
    for (const { workDir, runId } of leftovers) {
      if (flags.yes && !removedLeftovers.includes(runId)) continue;
      io.out(`${flags.yes ? "removed" : "would remove"} leftover ${runId}  (owner records only, no journal)  ${workDir}\n`);
    }
    for (const { run_id: runId, reason } of left) io.err(`left ${runId}: ${reason}\n`);
  }
  const andLeftovers = (count: number): string => (count === 0 ? "" : ` and ${count} leftover folder${count === 1 ? "" : "s"}`);
  if (!flags.yes) {
    const runs = chosen.length === 0 ? "" : `${chosen.length === 1 ? "this run" : `these ${chosen.length} runs`}${rule.ioOnly ? "' io/" : ""} (${humanBytes(bytes)})`;
    io.err(chosen.length + leftovers.length === 0 ? "Nothing to prune.\n" : `Nothing removed: add --yes to remove ${runs}${runs === "" ? andLeftovers(leftovers.length).slice(5) : andLeftovers(leftovers.length)}.\n`);
  } else io.err(`Removed ${removed.length} ${rule.ioOnly ? "runs' io/" : "runs"} (${humanBytes(bytes)})${andLeftovers(removedLeftovers.length)}.\n`);
  return EXIT.COMPLETED;
}

function pruneRule(flags: Record<string, unknown>): PruneRule {
  const status = parseStatus(flags.status) ?? "COMPLETED";
  if (!PRUNABLE.includes(status)) {
    throw new UsageError(`--status ${status}: prune removes only finished runs (${PRUNABLE.join(", ")}); a RUNNING, WAITING_FOR_INPUT or DEFERRED run (one that waits to go on) is never removed.`);
  }
  const olderThan = optionalString("--older-than", flags.olderThan);
  const keep = optionalString("--keep", flags.keep);
  if (olderThan === undefined && keep === undefined) {
    throw new UsageError("Say which runs may go: --older-than <age> (e.g. 7d, 12h, 30m) and/or --keep <n> (keep the n newest). Example: delta prune -w ./ws --older-than 7d");
  }
  if (keep !== undefined && !/^\d+$/.test(keep)) throw new UsageError(`--keep must be a whole number ≥ 0 (got '${keep}').`);
  return {
    status,
    ...(olderThan === undefined ? {} : { olderThan: Date.now() - parseAge(olderThan) }),
    ...(keep === undefined ? {} : { keep: Number(keep) }),
    ioOnly: Boolean(flags.ioOnly),
  };
}

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "7d" → milliseconds; minutes, hours, days or weeks. */
function parseAge(text: string): number {
  const match = /^(\d+)([mhdw])$/.exec(text);
  if (!match) throw new UsageError(`--older-than takes an age such as 30m, 12h, 7d or 2w (got '${text}').`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}
