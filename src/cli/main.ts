// The `delta` command line: parses argv, runs one command, and turns its outcome or error into an exit code.
// stdout carries only the command's result for the chosen --format; everything else goes to stderr.
import "../zod-config.js";
import { DeltaError, EXIT, UsageError } from "../errors.js";
import { takeDeferredCaCerts } from "../llm/transport/deferred-ca.js";
import { takeLauncherMallocArenas } from "./malloc-arenas.js";
import { EMPTY_USAGE } from "../llm/usage.js";
import { parseArgv } from "./parse-argv.js";
import { processIo, type CliIo } from "./io.js";
import { checkOutputFile, writeOutputFile } from "./output-file.js";
import { toRunResult, type RunResult } from "../run/run-result.js";
import { buildCli, type Flags, type Handler } from "./command-table.js";

/** `--json` is `--format json`; given with another --format, the two disagree and the line is refused. */
function withJsonFormat(flags: Flags): Flags {
  const { json, ...rest } = flags;
  if (!json) return rest;
  if (rest.format !== undefined && rest.format !== "json") throw new UsageError(`--json is --format json, and --format ${String(rest.format)} was given too; give one of them.`);
  return { ...rest, format: "json" };
}

/** The --format of a command line, --json included: a refusal is printed in it. */
function formatOf(argv: readonly string[]): string | undefined {
  const options = argv.slice(0, argv.includes("--") ? argv.indexOf("--") : argv.length);
  return options.includes("--json") ? "json" : argValue(argv, ["--format"]);
}

/** The value of a value-taking option as typed on the command line (`--x v` or `--x=v`), for reporting a refusal. */
function argValue(argv: readonly string[], names: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i]!;
    if (token === "--") return undefined;
    if (names.includes(token)) return argv[i + 1];
    const name = names.find((candidate) => candidate.startsWith("--") && token.startsWith(`${candidate}=`));
    if (name !== undefined) return token.slice(name.length + 1);
  }
  return undefined;
}

function report(err: unknown, argv: readonly string[], io: CliIo): number {
  const known = err instanceof DeltaError ? err : null;
  const format = formatOf(argv);
  const [type, message, exitCode] = known ? [known.type, known.message, known.exitCode] : ["INTERNAL_ERROR", String(err), EXIT.FAILED];
  io.err(known ? `Error: ${message}\n` : `Internal error (please report it): ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  // json and stream-json promise one RunResult for every outcome, refusals included.
  const status = exitCode === EXIT.REFUSED ? "REFUSED" : exitCode === EXIT.INTERRUPTED ? "INTERRUPTED" : "FAILED";
  const result = refusal(argv, { type, message, status, agentName: known?.agentName ?? null });
  if (format === "json") io.data(`${JSON.stringify(result, null, 2)}\n`);
  if (format === "stream-json") io.data(`${JSON.stringify(result)}\n`);
  // -o of run and continue also gets the refusal; -o of report is a page, and a refusal writes none.
  const output = argv[0] === "run" || argv[0] === "continue" ? argValue(argv, ["-o", "--output"]) : undefined;
  if (output !== undefined) {
    try {
      writeOutputFile(checkOutputFile(output), format === "json" || format === "stream-json" ? `${JSON.stringify(result, null, 2)}\n` : "");
    } catch {
      // A bad -o is what was refused, or it cannot be written: the refusal is on stderr either way.
    }
  }
  return exitCode;
}

interface Refusal {
  type: string;
  message: string;
  status: "REFUSED" | "FAILED" | "INTERRUPTED";
  agentName: string | null;
}

/** The RunResult of an invocation that ended before a run did: `run` made none; `continue` names the run it was given. */
function refusal(argv: readonly string[], { type, message, status, agentName }: Refusal): RunResult {
  const now = new Date();
  return toRunResult({
    runId: argv[0] === "continue" ? argValue(argv, ["--run-id"]) ?? null : null,
    status,
    error: { type, message },
    iterations: 0,
    startTime: now,
    endTime: now,
    usage: EMPTY_USAGE,
    agentName,
    workspacePath: null,
    runDir: null,
  });
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  takeDeferredCaCerts();
  takeLauncherMallocArenas();
  const cli = buildCli();
  try {
    // `delta help [command]` is `delta [command] --help`.
    if (argv[0] === "help") return await main(argv.length > 1 ? [...argv.slice(1, 2), "--help"] : ["--help"], io);
    const line = parseArgv(cli, argv);
    if (line.help) {
      // The help of the command named, if any (init's names its templates).
      cli.matchedCommand = line.command ?? undefined;
      cli.outputHelp();
      return 0;
    }
    if (line.version) {
      cli.outputVersion();
      return 0;
    }
    if (line.command === null) {
      cli.outputHelp();
      return 0;
    }
    const run = line.command.commandAction as Handler;
    return await run(line.args, withJsonFormat(line.flags), io);
  } catch (err) {
    return report(err, argv, io);
  }
}

void main(process.argv.slice(2), processIo).then((code) => process.stdout.write("", () => process.exit(code)));
