// `delta run` and `delta continue`: flags in, a RunOutcome out, printed in the chosen format.
import { resolve } from "node:path";
import { UsageError } from "../../errors.js";
import type { RunOutcome } from "../../run/outcome.js";
import type { DriveOptions } from "../../run/run-context.js";
import { continueRun } from "../../run/resume.js";
import { startRun } from "../../run/start.js";
import type { CliIo } from "../io.js";
import { optionalString, parseFormat, parsePositiveInt, requiredString } from "../options.js";
import { exitCodeFor, formatOutcome, type OutputFormat } from "../output.js";
import { askOnTerminal, closeTerminal, promptLine } from "../terminal.js";

const DEFAULT_MAX_ITERATIONS = 30;

export async function runCommand(flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format);
  const message = requiredString("-m/--message", flags.message, 'Example: delta run --agent ./my-agent -m "Analyze sales data"');
  const agent = optionalString("--agent", flags.agent) ?? ".";
  const workDir = optionalString("-w/--work-dir", flags.workDir);
  return drive(format, io, (signal) =>
    startRun({
      agentHome: resolve(agent),
      message,
      runId: optionalString("--run-id", flags.runId),
      workDir: workDir === undefined ? undefined : resolve(workDir),
      yes: Boolean(flags.yes),
      isTTY: Boolean(process.stdin.isTTY && process.stderr.isTTY),
      promptWorkspace: promptLine,
      ...driveOptions(flags, io, signal),
    }),
  );
}

export async function continueCommand(flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format);
  const runId = requiredString("--run-id", flags.runId, "Find run ids with: delta list-runs -w <workspace>");
  const workDir = optionalString("-w/--work-dir", flags.workDir) ?? ".";
  return drive(format, io, (signal) =>
    continueRun({
      runId,
      workDir: resolve(workDir),
      message: optionalString("-m/--message", flags.message),
      force: Boolean(flags.force),
      ...driveOptions(flags, io, signal),
    }),
  );
}

/** The flags `run` and `continue` share, turned into engine options. */
function driveOptions(flags: Record<string, unknown>, io: CliIo, signal: AbortSignal): DriveOptions {
  return {
    maxIterations: parsePositiveInt("--max-iterations", flags.maxIterations, DEFAULT_MAX_ITERATIONS),
    replay: replaySource(flags.replay),
    signal,
    progress: (line) => io.err(`${line}\n`),
    verbose: Boolean(flags.verbose),
    warn: (line) => io.err(`${line}\n`),
    askInteractively: flags.interactive ? askOnTerminal : undefined,
  };
}

function replaySource(value: unknown): string | undefined {
  const source = optionalString("--replay", value);
  if (source === "") throw new UsageError("--replay needs a replies file or a run directory.");
  return source === undefined ? undefined : resolve(source);
}

/** Runs the engine with SIGINT/SIGTERM wired to an abort, then prints the outcome. */
async function drive(format: OutputFormat, io: CliIo, go: (signal: AbortSignal) => Promise<RunOutcome>): Promise<number> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(130);
    io.err(`\nReceived ${signal}: stopping the run (send it again to exit at once)\n`);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const outcome = await go(controller.signal);
    io.out(formatOutcome(outcome, format));
    if (outcome.status === "WAITING_FOR_INPUT" && outcome.interaction && outcome.runDir) {
      io.err(
        `Agent paused. Provide response in ${outcome.runDir}/interaction/response.txt\n` +
          `Or use: delta continue --run-id ${outcome.runId} -w ${outcome.workspacePath} -m <response>\n`,
      );
    }
    // stdout is for programs in json and raw; the person watching still needs to read why it failed.
    if (format !== "text" && outcome.status !== "COMPLETED" && outcome.error) io.err(`${outcome.error.type}: ${outcome.error.message}\n`);
    return exitCodeFor(outcome);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    closeTerminal();
  }
}
