// `delta run` and `delta continue`: flags in, a RunOutcome out, printed in the chosen format.
import shellQuote from "shell-quote";
import { resolve } from "node:path";
import { agentHomeOf } from "../../agent/agent-home.js";
import { didYouMean } from "../../did-you-mean.js";
import { EXIT, RunRefusedError, UsageError, errorMessage } from "../../errors.js";
import { resumeExistingRun, runExists, type IfExists } from "../../run/idempotent-run.js";
import { continueCommand } from "../../continue-command.js";
import type { RunOutcome } from "../../run/outcome.js";
import type { DriveOptions } from "../../run/drive-options.js";
import type { BudgetFlags } from "../../run/run-budget.js";
import type { ReplayCheckMode } from "../../llm/replay.js";
import type { ActivitySink } from "../../loop/activity.js";
import { continueRun } from "../../run/resume.js";
import { startRun } from "../../run/start.js";
import { locateRun } from "../../store/locate-run.js";
import { lastRun } from "../run-query.js";
import type { RunId } from "../../store/run-id.js";
import { SANDBOX_MODES, type SandboxMode } from "../../process/sandbox/policy-schema.js";
import type { CliIo } from "../io.js";
import { readMessage } from "../message-input.js";
import { optionalRunId, optionalString, parseFormat, parsePositiveInt } from "../options.js";
import { checkOutputFile, writeOutputFile } from "../output-file.js";
import { exitCodeFor, formatOutcome, outputFileContent, type OutputFormat } from "../output.js";
import { runScope } from "../run-scope.js";
import { createStatusLine } from "../status-line.js";
import { askOnTerminal, closeTerminal, promptLine } from "../terminal.js";

/** The `type` of a stream-json line that carries a piece of a streamed reply: no journal event has it, and it has no seq. */
const TEXT_DELTA = "TEXT_DELTA";

const DEFAULT_MAX_ITERATIONS = 30;

export async function runCommand(task: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format);
  const output = outputFlag(flags);
  const agentHome = await agentHomeOf(optionalString("--agent", flags.agent) ?? ".");
  const workDir = optionalString("-w/--work-dir", flags.workDir);
  const message = await readMessage(flags, { stdinWhenPiped: true, interactive: Boolean(flags.interactive), argument: task, called: "task" });
  if (message === undefined) {
    throw new UsageError('The task is required: delta run --agent ./my-agent "Analyze sales data" (or -m <text>, --message-file <path>, or the task piped on stdin).');
  }
  const runId = optionalRunId("--run-id", flags.runId);
  const ifExists = ifExistsFlag(flags, runId, workDir);
  return drive({ format, output, streamDeltas: streamDeltasFlag(flags, format), resumeWith: resumeOptions(flags) }, io, async (signal, watch) => {
    const existing = (): Promise<RunOutcome> =>
      resumeExistingRun({ runId: runId!, workDir: resolve(workDir!), agentHome, message, ...driveOptions(flags, watch, signal) });
    if (ifExists === "resume" && runExists(resolve(workDir!), runId!)) return existing();
    try {
      return await startRun({
        agentHome,
        message,
        runId,
        workDir: workDir === undefined ? undefined : resolve(workDir),
        yes: Boolean(flags.yes),
        // A question needs someone at the terminal; with stdout piped the caller is a program.
        isTTY: Boolean(process.stdin.isTTY && process.stderr.isTTY && process.stdout.isTTY),
        promptWorkspace: promptLine,
        ...outputSchemaFlag(flags),
        ...driveOptions(flags, watch, signal),
      });
    } catch (err) {
      // Another retry of the same task claimed the id first: meet its run as if it had been there before.
      if (ifExists === "resume" && err instanceof RunRefusedError && runExists(resolve(workDir!), runId!)) return existing();
      throw err;
    }
  });
}

/** `--if-exists refuse|resume`; resume needs the run's id and workspace, since it must find the run. */
function ifExistsFlag(flags: Record<string, unknown>, runId: RunId | undefined, workDir: string | undefined): IfExists {
  const value = optionalString("--if-exists", flags.ifExists) ?? "refuse";
  if (value !== "refuse" && value !== "resume") throw new UsageError(`--if-exists takes refuse (the default) or resume, got ${JSON.stringify(value)}.${didYouMean(value, ["refuse", "resume"])}`);
  if (value === "resume" && (runId === undefined || workDir === undefined)) {
    throw new UsageError("--if-exists resume needs --run-id <id> and -w <workspace>: it looks for that run there. Example: delta run --agent ./agent -w ./ws --run-id item-7 --if-exists resume -m \"…\"");
  }
  return value;
}

export async function continueCommandLine(messageArgument: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  if (flags.due) {
    if (messageArgument !== undefined) throw new UsageError("--due continues every deferred run that is due, each as it stands: give no message with it.");
    return (await import("./continue-due.js")).continueDue(flags, io);
  }
  if (flags.jobs !== undefined) throw new UsageError("-j/--jobs goes with --due (how many due runs to continue at a time); one run is continued one way.");
  const format = parseFormat(flags.format);
  const output = outputFlag(flags);
  const runId = optionalRunId("--run-id", flags.runId);
  if (runId !== undefined && flags.last) throw new UsageError("Give --run-id <id> or --last, not both.");
  if (runId === undefined && !flags.last) {
    throw new UsageError("--run-id <id> (or --last, the newest run) is required. Find run ids with: delta list-runs -w <workspace> (or --agent <dir>)");
  }
  const scope = await runScope(flags);
  const message = await readMessage(flags, { stdinWhenPiped: false, interactive: Boolean(flags.interactive), argument: messageArgument, called: "message" });
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const run = runId === undefined ? await lastRun(flags, warn) : locateRun(scope, runId);
  return drive({ format, output, streamDeltas: streamDeltasFlag(flags, format), resumeWith: resumeOptions(flags) }, io, (signal, watch) =>
    continueRun({
      runId: run.runId,
      workDir: run.workDir,
      message,
      force: Boolean(flags.force),
      ...driveOptions(flags, watch, signal),
    }),
  );
}

/** --stream-deltas only means something with stream-json, whose stdout it adds to. */
function streamDeltasFlag(flags: Record<string, unknown>, format: OutputFormat): boolean {
  if (!flags.streamDeltas) return false;
  if (format !== "stream-json") throw new UsageError("--stream-deltas adds lines to --format stream-json; give --format stream-json too, or drop it.");
  return true;
}

/** How the engine's progress reaches the person watching: lines on stderr, what it does now, and with stream-json each journal line. */
interface Watch {
  line: (text: string) => void;
  activity: ActivitySink;
  appended?: DriveOptions["appended"];
}

/** The flags `run` and `continue` share, turned into engine options. */
function driveOptions(flags: Record<string, unknown>, watch: Watch, signal: AbortSignal): DriveOptions {
  const model = optionalString("--model", flags.model);
  if (model === "") throw new UsageError("--model needs a model name, e.g. --model gpt-4o-mini.");
  const sandbox = optionalString("--sandbox", flags.sandbox);
  if (sandbox !== undefined && !(SANDBOX_MODES as readonly string[]).includes(sandbox)) {
    throw new UsageError(`--sandbox is one of ${SANDBOX_MODES.join(", ")}; got ${JSON.stringify(sandbox)}.${didYouMean(sandbox, SANDBOX_MODES)}`);
  }
  const baseUrl = optionalString("--base-url", flags.baseUrl);
  if (baseUrl === "") throw new UsageError("--base-url needs a URL, e.g. --base-url http://localhost:11434/v1.");
  return {
    maxIterations: parsePositiveInt("--max-iterations", flags.maxIterations, DEFAULT_MAX_ITERATIONS),
    ...(sandbox === undefined ? {} : { sandbox: sandbox as SandboxMode }),
    replay: replaySource(flags.replay),
    ...replayCheckFlag(flags),
    ...(model === undefined ? {} : { model }),
    ...(baseUrl === undefined ? {} : { baseUrl }),
    acceptEndpoint: Boolean(flags.acceptEndpoint),
    budget: budgetFlags(flags),
    ...(flags.batch ? { batch: true } : {}),
    ...(flags.submit ? { submit: true } : {}),
    ...(flags.live ? { live: true } : {}),
    signal,
    progress: watch.line,
    activity: watch.activity,
    verbose: Boolean(flags.verbose),
    warn: watch.line,
    askInteractively: flags.interactive ? askOnTerminal : undefined,
    ...(watch.appended ? { appended: watch.appended } : {}),
  };
}

/** --max-cost-usd and --budget-file (else DELTA_BUDGET_FILE). */
function budgetFlags(flags: Record<string, unknown>): BudgetFlags {
  const dollars = optionalString("--max-cost-usd", flags.maxCostUsd);
  const amount = dollars === undefined ? undefined : Number(dollars);
  if (amount !== undefined && !(Number.isFinite(amount) && amount > 0)) throw new UsageError(`--max-cost-usd takes an amount of dollars above 0, e.g. --max-cost-usd 2.50 (got '${dollars}').`);
  const ledger = optionalString("--budget-file", flags.budgetFile) ?? (process.env.DELTA_BUDGET_FILE || undefined);
  if (ledger === "") throw new UsageError("--budget-file needs the path of a ledger made by `delta budget init <ledger> --limit-usd <dollars>`.");
  return { ...(amount === undefined ? {} : { maxCostUsd: amount }), ...(ledger === undefined ? {} : { budgetFile: resolve(ledger) }) };
}

function replaySource(value: unknown): string | undefined {
  const source = optionalString("--replay", value);
  if (source === "") throw new UsageError("--replay needs a replies file or a run directory.");
  return source === undefined ? undefined : resolve(source);
}

/** --until-divergence or --replay-strict: how each request is checked against the recording --replay names. */
function replayCheckFlag(flags: Record<string, unknown>): { replayCheck?: ReplayCheckMode } {
  const untilDivergence = Boolean(flags.untilDivergence);
  const strict = Boolean(flags.replayStrict);
  if (!untilDivergence && !strict) return {};
  const given = untilDivergence ? "--until-divergence" : "--replay-strict";
  if (untilDivergence && strict) throw new UsageError("--until-divergence goes live where a request differs from the recording, --replay-strict stops there: give one of them.");
  if (flags.replay === undefined) throw new UsageError(`${given} checks each request against a recorded run: give that run's folder with --replay <workspace>/.delta/<run-id>.`);
  return { replayCheck: untilDivergence ? "until-divergence" : "strict" };
}

function outputSchemaFlag(flags: Record<string, unknown>): { outputSchema?: string } {
  const file = optionalString("--output-schema", flags.outputSchema);
  if (file === "") throw new UsageError("--output-schema needs the path of a JSON Schema file.");
  return file === undefined ? {} : { outputSchema: file };
}

function outputFlag(flags: Record<string, unknown>): string | undefined {
  const given = optionalString("-o/--output", flags.output);
  return given === undefined ? undefined : checkOutputFile(given);
}

interface DriveOutput {
  format: OutputFormat;
  output: string | undefined;
  /** stream-json: the model's text as it arrives, as TEXT_DELTA lines between the journal's. */
  streamDeltas: boolean;
  /** Options the printed resume command must carry to go on as this invocation went (`--replay <source>`). */
  resumeWith: string[];
}

/** A replayed run goes on replaying: its next model call is the recording's next reply, not a live model's. */
function resumeOptions(flags: Record<string, unknown>): string[] {
  const source = replaySource(flags.replay);
  if (source === undefined) return [];
  const check = replayCheckFlag(flags).replayCheck;
  return ["--replay", source, ...(check === "until-divergence" ? ["--until-divergence"] : check === "strict" ? ["--replay-strict"] : [])];
}

/** Runs the engine with SIGINT/SIGTERM wired to an abort, then prints the outcome. */
async function drive({ format, output, streamDeltas, resumeWith }: DriveOutput, io: CliIo, go: (signal: AbortSignal, watch: Watch) => Promise<RunOutcome>): Promise<number> {
  // The run's duration counts all of this invocation: loading the agent and starting its MCP servers too.
  const invoked = new Date();
  const controller = new AbortController();
  const status = createStatusLine(process.stderr);
  const watch: Watch = {
    line: (text) => status.above(`${text}\n`),
    activity: (activity) => {
      status.show(activity);
      if (streamDeltas && activity.kind === "model-text") io.data(`${JSON.stringify({ type: TEXT_DELTA, iteration: activity.iteration, text: activity.text })}\n`);
    },
    // stream-json: each journal line as it is appended; the RunResult comes last.
    ...(format === "stream-json" ? { appended: (_event, line) => io.data(`${line}\n`) } : {}),
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(130);
    status.above(`\nReceived ${signal}: stopping the run (send it again to exit at once)\n`);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    // The run's files are closed when the outcome comes: nothing is appended after it, so the RunResult is the stream's last line.
    const outcome = { ...(await go(controller.signal, watch)), startTime: invoked };
    status.stop();
    let exitCode: number = exitCodeFor(outcome);
    if (output !== undefined) {
      try {
        writeOutputFile(output, outputFileContent(outcome, format));
      } catch (err) {
        io.err(`Error: ${errorMessage(err)}\n`);
        if (exitCode === EXIT.COMPLETED) exitCode = EXIT.FAILED;
      }
    }
    // Text for a person takes the text path; raw is byte-exact for a program, text on a terminal; JSON escapes by itself.
    const printed = formatOutcome(outcome, format);
    if (format === "text" || (format === "raw" && process.stdout.isTTY)) io.out(printed);
    else io.data(printed);
    // stdout is for programs in json and raw; the person watching still needs to read why it failed.
    if (format !== "text" && outcome.status !== "COMPLETED" && outcome.error) io.err(`${outcome.error.type}: ${outcome.error.message}\n`);
    io.err(resumeHint(outcome, resumeWith));
    return exitCode;
  } finally {
    status.stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    closeTerminal();
  }
}

/** For every run that did not complete: the exact command that resumes it, workspace included, on stderr. */
function resumeHint(outcome: RunOutcome, options: readonly string[]): string {
  if (outcome.status === "COMPLETED" || outcome.runId === null || outcome.workspacePath === null) return "";
  if (outcome.status === "WAITING_FOR_INPUT") {
    // In every format: json and raw keep stdout for programs, so the person reads the question here.
    const question = outcome.interaction ? `The agent asks: ${outcome.interaction.prompt}\n` : "";
    const file = outcome.runDir === null ? "" : `\nor write the answer to ${outcome.runDir}/interaction/response.txt and run it without -m`;
    return `${question}Answer with: ${continueCommand(outcome.runId, outcome.workspacePath, "<answer>", options)}${file}\n`;
  }
  if (outcome.status === "DEFERRED") {
    const when = outcome.deferred?.resume_after ? ` once ${outcome.deferred.resume_after} has passed` : "";
    return `To go on${when}: ${continueCommand(outcome.runId, outcome.workspacePath, undefined, options)}\n(or \`${shellQuote.quote(["delta", "continue", "--due", "-w", outcome.workspacePath])}\` resumes every deferred run of the workspace whose time has come)\n`;
  }
  const why = outcome.status === "FAILED" ? "retry it (add -m <message> to tell the model something first)" : "resume it";
  return `To ${why}: ${continueCommand(outcome.runId, outcome.workspacePath, undefined, options)}\n`;
}
