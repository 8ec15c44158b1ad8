// The `delta` command line: parses argv, runs one command, and turns its outcome or error into an exit code.
// stdout carries only the command's result for the chosen --format; everything else goes to stderr.
import "../zod-config.js";
import { cac } from "cac";
import { DeltaError, EXIT, UsageError } from "../errors.js";
import { takeDeferredCaCerts } from "../llm/transport/deferred-ca.js";
import { EMPTY_USAGE } from "../llm/usage.js";
import { ENGINE_VERSION } from "../run/session.js";
import { protectValues, unprotect, unprotectAll } from "./argv.js";
import { processIo, type CliIo } from "./io.js";
import { toRunResult } from "./output.js";

type Flags = Record<string, unknown>;
type Handler = (args: string[], flags: Flags, io: CliIo) => Promise<number>;

function buildCli(dispatch: (handler: Handler) => (...raw: unknown[]) => void) {
  const cli = cac("delta");
  cli
    .command("run", "Start a new run of an agent")
    .option("--agent <path>", "Agent directory", { default: "." })
    .option("-m, --message <text>", "Task description or user message (required)")
    .option("-w, --work-dir <path>", "Workspace directory (default: a new W00N under the agent)")
    .option("--max-iterations <n>", "Model calls allowed in this invocation (default: 30)")
    .option("-v, --verbose", "Verbose logging")
    .option("-i, --interactive", "Answer ask_human on this terminal instead of pausing")
    .option("-y, --yes", "Never prompt: create a new workspace")
    .option("--run-id <id>", "Client-generated run id (1-128 of A-Z a-z 0-9 . _ -)")
    .option("--format <format>", "Output: text | json | raw (default: text)")
    .option("--replay <source>", "Use recorded model replies (a .jsonl file or a run directory) instead of a model")
    .action(dispatch(async (_args, flags, io) => (await import("./commands/run.js")).runCommand(flags, io)));
  cli
    .command("continue", "Continue an existing run (resume, answer, extend or retry)")
    .option("--run-id <id>", "The run to continue (required)")
    .option("-w, --work-dir <path>", "Workspace holding the run (default: current directory)")
    .option("-m, --message <text>", "A new instruction, or the answer to the open question")
    .option("--max-iterations <n>", "Model calls allowed in this invocation (default: 30)")
    .option("-v, --verbose", "Verbose logging")
    .option("-i, --interactive", "Answer ask_human on this terminal instead of pausing")
    .option("--force", "Take over a RUNNING run started on another host")
    .option("--format <format>", "Output: text | json | raw (default: text)")
    .option("--replay <source>", "Use recorded model replies instead of a model")
    .action(dispatch(async (_args, flags, io) => (await import("./commands/run.js")).continueCommand(flags, io)));
  cli
    .command("list-runs", "List the runs of a workspace, newest first")
    .option("-w, --work-dir <path>", "Workspace (default: current directory)")
    .option("--resumable", "Only runs that `delta continue` can take")
    .option("--status <status>", "Only runs with this status")
    .option("--first", "Only the most recent run")
    .option("--format <format>", "Output: text | json | raw (raw: one run id per line)")
    .action(dispatch(async (_args, flags, io) => (await import("./commands/list-runs.js")).listRunsCommand(flags, io)));
  cli
    .command("init [name]", "Create a new agent directory from a template")
    .option("-t, --template <template>", "Template name (default: hello-world)")
    .option("-y, --yes", "Never prompt")
    .action(dispatch(async (args, flags, io) =>
      (await import("./commands/init.js")).init(
        { name: args[0], template: flags.template as string | undefined, yes: Boolean(flags.yes), cwd: process.cwd() },
        io,
      ),
    ));
  cli
    .command("tool <action> <path>", "Tool helpers: `delta tool expand <agent.yaml>` prints the expanded tool definitions")
    .action(dispatch(async (args, _flags, io) => {
      if (args[0] !== "expand") throw new UsageError(`Unknown tool action '${args[0]}'. Use: delta tool expand <path/to/agent.yaml>`);
      return (await import("./commands/tool-expand.js")).toolExpand(args[1]!, io);
    }));
  cli
    .command("tool:expand <path>", "Same as `delta tool expand <path>`")
    .action(dispatch(async (args, _flags, io) => (await import("./commands/tool-expand.js")).toolExpand(args[0]!, io)));
  cli.help();
  cli.version(ENGINE_VERSION);
  return cli;
}

/** Options that take a value, in every spelling, so their values survive parsing as typed. */
function valueOptions(cli: ReturnType<typeof cac>): Set<string> {
  const names = new Set<string>();
  for (const command of [cli.globalCommand, ...cli.commands]) {
    for (const option of command.options) {
      if (option.isBoolean) continue;
      for (const spelling of option.rawName.split(/[ ,]+/).filter((part) => part.startsWith("-"))) names.add(spelling);
    }
  }
  return names;
}

function wantsJson(argv: readonly string[]): boolean {
  const index = argv.indexOf("--format");
  return argv.includes("--format=json") || (index >= 0 && argv[index + 1] === "json");
}

function report(err: unknown, argv: readonly string[], io: CliIo): number {
  const known = err instanceof DeltaError ? err : isCacError(err) ? new UsageError(`${err.message}. See: delta --help`) : null;
  if (!known) {
    io.err(`Internal error (please report it): ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    if (wantsJson(argv)) io.out(`${JSON.stringify(refusal(argv, "INTERNAL_ERROR", String(err)), null, 2)}\n`);
    return EXIT.FAILED;
  }
  io.err(`Error: ${known.message}\n`);
  if (wantsJson(argv)) io.out(`${JSON.stringify(refusal(argv, known.type, known.message), null, 2)}\n`);
  return known.exitCode;
}

function refusal(argv: readonly string[], type: string, message: string): Record<string, unknown> {
  const index = argv.indexOf("--run-id");
  const runId = index >= 0 ? argv[index + 1] ?? null : null;
  const now = new Date();
  return toRunResult({
    runId,
    status: "FAILED",
    error: { type, message },
    iterations: 0,
    startTime: now,
    endTime: now,
    usage: EMPTY_USAGE,
    agentName: null,
    workspacePath: null,
    runDir: null,
  });
}

function isCacError(err: unknown): err is Error {
  return err instanceof Error && err.name === "CACError";
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  takeDeferredCaCerts();
  let result: Promise<number> | null = null;
  const dispatch = (handler: Handler) => (...raw: unknown[]): void => {
    const flags = unprotectAll(raw.pop() as Flags);
    const args = raw.map((value) => String(unprotect(value)));
    result = handler(args, flags, io);
  };
  const cli = buildCli(dispatch);
  try {
    cli.parse(["node", "delta", ...protectValues(argv, valueOptions(cli))], { run: false });
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) throw new UsageError(`Unknown command '${String(cli.args[0])}'. See: delta --help`);
      if (!cli.options.help && !cli.options.version) cli.outputHelp();
      return 0;
    }
    await cli.runMatchedCommand();
    return result === null ? 0 : await result;
  } catch (err) {
    return report(err, argv, io);
  }
}

void main(process.argv.slice(2), processIo).then((code) => process.stdout.write("", () => process.exit(code)));
