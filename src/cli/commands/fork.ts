// `delta fork RUN --at N`: a new run from RUN's journal through iteration N, in the workspace named (never copied), ready for `delta continue -m`.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { continueCommand } from "../../continue-command.js";
import { EXIT, UsageError } from "../../errors.js";
import { forkRun } from "../../run/fork.js";
import { runPaths } from "../../store/run-dir.js";
import { isRunId, parseRunId } from "../../store/run-id.js";
import { terminalSafe } from "../../terminal-text.js";
import type { CliIo } from "../io.js";
import { optionalString, parseFormat } from "../options.js";
import { findRunOrFolder } from "../run-query.js";

export async function forkCommand(source: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format, ["text", "json"]);
  if (source === undefined) throw new UsageError("delta fork needs the run to fork: delta fork <run> --at <iteration> [--run-id <new id>] [-w <workspace>].");
  const at = optionalString("--at", flags.at);
  if (at === undefined) throw new UsageError(`delta fork needs --at <iteration>: the last iteration of ${source} the fork keeps.`);
  if (!/^\d+$/.test(at) || Number(at) < 1) throw new UsageError(`--at takes the iteration the fork ends with (1, 2, …), got ${JSON.stringify(at)}.`);
  const runIdWord = optionalString("--run-id", flags.runId);
  const runId = runIdWord === undefined ? undefined : parseRunId(runIdWord);
  const workDir = optionalString("-w/--work-dir", flags.workDir);
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const outcome = await forkRun({
    source: await findSource(source, flags, workDir),
    at: Number(at),
    ...(runId === undefined ? {} : { runId }),
    ...(workDir === undefined ? {} : { workDir: resolve(workDir) }),
    warn,
  });
  const next = continueCommand(outcome.runId, outcome.workDir, "<message>");
  if (outcome.sharesWorkspace) {
    io.err(
      `The fork works in ${outcome.workDir}, the workspace of run ${outcome.forkedFrom.run_id} as it is now, not as it was at iteration ${outcome.iterations}: ` +
        "a fork never copies a workspace. To branch the files too, snapshot the workspace (git, or cp -a --reflink=auto) and fork with -w <the copy>.\n",
    );
  }
  if (format === "json") {
    io.out(`${JSON.stringify({ run_id: outcome.runId, status: outcome.status, iterations: outcome.iterations, work_dir: outcome.workDir, run_dir: outcome.runDir, forked_from: outcome.forkedFrom, copied: { events: outcome.copied.events, invocations: outcome.copied.invocations, tool_executions: outcome.copied.toolExecutions, hooks: outcome.copied.hooks }, continue_command: next }, null, 2)}\n`);
  } else {
    io.out(terminalSafe(`Forked run ${outcome.forkedFrom.run_id} at iteration ${outcome.iterations} into run ${outcome.runId} (${outcome.status}) in ${outcome.workDir}\nGo on with: ${next}\n`));
  }
  return EXIT.COMPLETED;
}

/** The run to fork: by its folder's path, or by id in -w (the fork's workspace, often the source's too), else where `show` finds it. */
async function findSource(word: string, flags: Record<string, unknown>, workDir: string | undefined): Promise<{ runId: string; paths: ReturnType<typeof runPaths> }> {
  const pathLike = word.includes("/") || word.startsWith(".");
  if (!pathLike && isRunId(word) && workDir !== undefined && flags.agent === undefined && existsSync(runPaths(resolve(workDir), word).runDir)) {
    return { runId: word, paths: runPaths(resolve(workDir), word) };
  }
  const { workDir: _fork, ...elsewhere } = flags;
  return findRunOrFolder(word, elsewhere);
}
