// The `delta` command line: parses argv, runs one command, and turns its outcome or error into an exit code.
// stdout carries only the command's result for the chosen --format; everything else goes to stderr.
import "../zod-config.js";
import { cac } from "cac";
import { DeltaError, EXIT, UsageError } from "../errors.js";
import { takeDeferredCaCerts } from "../llm/transport/deferred-ca.js";
import { EMPTY_USAGE } from "../llm/usage.js";
import { ENGINE_VERSION } from "../engine-version.js";
import { protectValues, unprotect, unprotectAll } from "./argv.js";
import { processIo, type CliIo } from "./io.js";
import { checkOutputFile, writeOutputFile } from "./output-file.js";
import { toRunResult } from "../run/run-result.js";
import { STDIN_LIMIT_BYTES } from "./message-input.js";
import { DEFAULT_TEMPLATE, listTemplates } from "./templates.js";

/** Where run, continue, show, report and list-runs look without -w or --agent: where `run` puts its runs. */
const WHERE_RUNS_ARE = "in an agent's folder, its workspaces; elsewhere the current directory";

type Flags = Record<string, unknown>;
type Handler = (args: (string | undefined)[], flags: Flags, io: CliIo) => Promise<number>;

function buildCli(dispatch: (handler: Handler) => (...raw: unknown[]) => void) {
  const cli = cac("delta");
  cli
    .command("run", "Start a new run of an agent")
    .usage("run [--agent <dir>] -m <task> [options]\n\n  Required: the task, as -m <text>, --message-file <path> or a piped stdin;\n  the agent is the current directory unless --agent names it.")
    .option("--agent <path>", "Agent directory, or its agent.yaml", { default: "." })
    .option("-m, --message <text>", "The task (required, not empty); `-m -` reads it from stdin, as does a piped stdin without -m")
    .option("--message-file <path>", "Read the task from this file")
    .option("--stdin", `Append the piped stdin (at most ${STDIN_LIMIT_BYTES / 1024 / 1024} MiB) to the message, after a blank line`)
    .option("--stream-deltas", "With --format stream-json: also print the model's text as it arrives, as lines of type TEXT_DELTA (no seq)")
    .option("-w, --work-dir <path>", "Workspace directory (default: a new W00N under the agent)")
    .option("--model <name>", "Model for this invocation (default: $DELTA_MODEL, else llm.model in agent.yaml)")
    .option("--max-iterations <n>", "Model calls allowed in this invocation (default: 30)")
    .option("-v, --verbose", "Verbose logging")
    .option("-i, --interactive", "Answer ask_human on this terminal instead of pausing")
    .option("-y, --yes", "Never prompt: create a new workspace")
    .option("--run-id <id>", "Client-generated run id (1-128 of A-Z a-z 0-9 . _ -)")
    .option("--format <format>", "Output: text | json | raw | stream-json (default: text)")
    .option("-o, --output <file>", "Also write the result (json: the RunResult) to this file, atomically")
    .option("--replay <source>", "Use recorded model replies (a .jsonl file or a run directory) instead of a model")
    .option("--output-schema <file>", "JSON Schema (JSON or YAML) the final answer must meet, for this run (in place of output_schema in agent.yaml)")
    .option("--sandbox <mode>", "Box every tool and MCP server for this run: read-only | workspace-write | off (off warns when the agent asks for one)")
    .example('delta run --agent ./my-agent -y -m "Summarise sales.csv"')
    .example('cat report.txt | delta run --agent ./my-agent -y -m "Summarise this" --stdin --format json')
    .option("--base-url <url>", "Model endpoint for this invocation (over DELTA_BASE_URL, .env files and llm.base_url)")
    .option("--if-exists <action>", "When --run-id is taken in -w: refuse (default) | resume (the same task's run: its result again, or continued)")
    .action(dispatch(async (_args, flags, io) => (await import("./commands/run.js")).runCommand(flags, io)));
  cli
    .command("continue", "Continue an existing run (resume, answer, extend or retry)")
    .option("--run-id <id>", "The run to continue")
    .option("--last", "Continue the newest run (of the workspace, or of the agent with --agent)")
    .option("-w, --work-dir <path>", `Workspace holding the run (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look for the run in every workspace of this agent (directory or agent.yaml)")
    .option("-m, --message <text>", "A new instruction, or the answer to the open question; `-m -` reads it from stdin")
    .option("--message-file <path>", "Read the message from this file")
    .option("--stdin", `Append the piped stdin (at most ${STDIN_LIMIT_BYTES / 1024 / 1024} MiB) to the message, after a blank line`)
    .option("--stream-deltas", "With --format stream-json: also print the model's text as it arrives, as lines of type TEXT_DELTA (no seq)")
    .option("--model <name>", "Model for this invocation (default: $DELTA_MODEL, else llm.model in agent.yaml)")
    .option("--max-iterations <n>", "Model calls allowed in this invocation (default: 30)")
    .option("-v, --verbose", "Verbose logging")
    .option("-i, --interactive", "Answer ask_human on this terminal instead of pausing")
    .option("--force", "Take over a run whose holder here is stuck, or whose owner record is unreadable, once it stops changing")
    .option("--format <format>", "Output: text | json | raw | stream-json (default: text)")
    .option("-o, --output <file>", "Also write the result (json: the RunResult) to this file, atomically")
    .option("--replay <source>", "Use recorded model replies instead of a model")
    .option("--sandbox <mode>", "Change the run's sandbox mode from now on: read-only | workspace-write | off (journaled)")
    .option("--base-url <url>", "Model endpoint for this invocation; the run moves there on purpose")
    .option("--accept-endpoint", "Continue even though the model endpoint differs from the one the run started with")
    .action(dispatch(async (_args, flags, io) => (await import("./commands/run.js")).continueCommandLine(flags, io)));
  cli
    .command("list-runs", "List runs, newest first")
    .option("-w, --work-dir <path>", `Workspace (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Every workspace of this agent (directory or agent.yaml)")
    .option("--resumable", "Only unfinished runs: FAILED, INTERRUPTED, WAITING_FOR_INPUT, and RUNNING ones whose holder is dead (runs held on other hosts are checked as with --check-liveness)")
    .option("--status <status>", "Only runs with this status")
    .option("--first", "Only the most recent run")
    .option("--size", "Show the bytes each run folder holds: in all, its journal, its io/")
    .option("--check-liveness", "Watch the heartbeat of runs held on other hosts (one stale period, 10 s by default, for all of them)")
    .option("--format <format>", "Output: text | json | raw (raw: one run id per line)")
    .action(dispatch(async (_args, flags, io) => (await import("./commands/list-runs.js")).listRunsCommand(flags, io)));
  cli
    .command("prune", "Remove finished runs (or only their io/) older than an age or beyond a count; lists them unless --yes")
    .option("-w, --work-dir <path>", "Workspace (default: current directory)")
    .option("--agent <path>", "Every workspace of this agent (directory or agent.yaml)")
    .option("--older-than <age>", "Only runs last updated longer ago than this: 30m, 12h, 7d, 2w")
    .option("--keep <n>", "Keep the n newest runs of that status; only older ones may go")
    .option("--status <status>", "COMPLETED (default), or FAILED or INTERRUPTED (resumable runs: only when named)")
    .option("--io-only", "Remove only each run's io/; its journal still shows and continues it")
    .option("--yes", "Remove them; without it prune only lists what it would remove")
    .option("--format <format>", "Output: text | json")
    .action(dispatch(async (_args, flags, io) => (await import("./commands/prune.js")).pruneCommand(flags, io)));
  cli
    .command("show [run-id]", "Show a run as readable text: task, iterations, tool calls, tokens, status, how to go on")
    .option("-w, --work-dir <path>", `Workspace holding the run (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look in the agent's workspaces (W001, W002…) instead")
    .option("--last", "The most recently updated run")
    .option("-f, --follow", "Keep printing events as the run appends them, until it ends")
    .option("--full", "Print thoughts and tool output whole, not their first lines")
    .option("--request <n>", "Print the model request of iteration n as JSON, rebuilt from io/invocations/")
    .action(dispatch(async (args, flags, io) => (await import("./commands/show.js")).showCommand(args[0], flags, io)));
  cli
    .command("report [run-id]", "Write a self-contained HTML report of a run, or of every run of a workspace (no run id)")
    .option("-w, --work-dir <path>", `Workspace holding the runs (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look in the agent's workspaces (W001, W002…) instead")
    .option("--last", "The most recently updated run")
    .option("-o, --output <file>", "Where to write the HTML (default: stdout; on a terminal, <run-id>.html in the current directory)")
    .action(dispatch(async (args, flags, io) => (await import("./commands/report.js")).reportCommand(args[0], flags, io)));
  cli
    .command("export [run-id]", "Export a run's spans (or every run's of a workspace or agent) from the journal: to an OTLP collector, or as OTLP/JSON")
    .option("-w, --work-dir <path>", `Workspace holding the runs (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look in the agent's workspaces (W001, W002…) instead")
    .option("--last", "The most recently updated run")
    .option("--otlp", "Send the spans to an OTLP/HTTP collector (OTEL_EXPORTER_OTLP_* as for live export)")
    .option("--endpoint <url>", "The collector, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT, else that)")
    .option("--format <format>", "otlp-json: write the spans as one OTLP/JSON ExportTraceServiceRequest")
    .option("-o, --output <file>", "Where --format otlp-json writes (default: stdout)")
    .example("delta export run-42 -w ./W001 --otlp --endpoint http://localhost:4318")
    .example("delta export --last -w ./W001 --format otlp-json -o trace.json")
    .action(dispatch(async (args, flags, io) => (await import("./commands/export.js")).exportCommand(args[0], flags, io)));
  cli
    .command("schema [file]", "Print the JSON Schema of agent.yaml, context.yaml or hooks.yaml (for editors)")
    .usage("schema <agent|context|hooks>")
    .action(dispatch(async (args, _flags, io) => (await import("./commands/schema.js")).schemaCommand(args[0], io)));
  cli
    .command("init [name]", "Create a new agent directory from a template")
    .option("-t, --template <template>", `Template name (default: ${DEFAULT_TEMPLATE})`)
    .option("-y, --yes", "Never prompt")
    .example("delta init my-agent -t minimal")
    .action(dispatch(async (args, flags, io) =>
      (await import("./commands/init.js")).init(
        { name: args[0], template: flags.template as string | undefined, yes: Boolean(flags.yes), cwd: process.cwd() },
        io,
      ),
    ));
  cli
    .command("tool <action> [path]", "Tool helpers: `delta tool expand <agent>` prints each tool's expansion and schema; `delta tool list <agent>` one line per tool")
    .usage("tool expand <agent dir | agent.yaml>\n  $ delta tool list <agent dir | agent.yaml>")
    .option("--agent <path>", "The agent directory or its agent.yaml (instead of <path>)")
    .example("delta tool expand ./my-agent/agent.yaml   # each tool as the argv it runs, and what the model is told")
    .example("delta tool list --agent ./my-agent        # every tool the model is offered, MCP servers' included")
    .action(dispatch(async (args, flags, io) => {
      const target = args[1] ?? (typeof flags.agent === "string" ? flags.agent : undefined);
      if (args[0] !== "expand" && args[0] !== "list") throw new UsageError(`Unknown tool action '${args[0]}'. Use: delta tool expand <agent dir | agent.yaml>, or delta tool list <agent dir | agent.yaml>`);
      if (target === undefined) throw new UsageError(`delta tool ${args[0]} needs the agent: delta tool ${args[0]} <agent dir | agent.yaml> (or --agent <dir>)`);
      if (args[0] === "list") return (await import("./commands/tool-list.js")).toolList(target, io);
      return (await import("./commands/tool-expand.js")).toolExpand(target, io);
    }));
  cli
    .command("skills <action> [path]", "Skills helpers: `delta skills list --agent <agent>` prints each skill the agent lists, with its size and description")
    .usage("skills list --agent <agent dir | agent.yaml>")
    .option("--agent <path>", "The agent directory or its agent.yaml (default: the current directory)")
    .option("--format <format>", "Output: text | json (default: text)")
    .example("delta skills list --agent ./my-agent")
    .action(dispatch(async (args, flags, io) => {
      if (args[0] !== "list") throw new UsageError(`Unknown skills action '${args[0]}'. Use: delta skills list --agent <agent dir | agent.yaml>`);
      const target = args[1] ?? (typeof flags.agent === "string" ? flags.agent : ".");
      return (await import("./commands/skills-list.js")).skillsList(target, flags, io);
    }));
  cli
    .command("mcp <action>", "Offer an agent's runs as MCP tools (run, continue, answer, status, result) to Claude Code, Codex or any MCP client")
    .usage("mcp serve --agent <agent> [-w <workspace>] [--http <port> [--host <address>] [--idle-timeout <seconds>]] [--term-grace <seconds>]")
    .option("--agent <path>", "Agent directory, or its agent.yaml", { default: "." })
    .option("-w, --work-dir <path>", "Workspace of every run (default: a new W00N under the agent per server start)")
    .option("--http <port>", "Serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio (0: any free port)")
    .option("--host <address>", "Address to bind with --http (default: 127.0.0.1; any other needs $DELTA_MCP_TOKEN)")
    .option("--idle-timeout <seconds>", "With --http: a session with no request and no open stream this long is taken as gone, its runs interrupted (default: 300)")
    .option("--term-grace <seconds>", "How long an interrupted run has to end after SIGTERM before it is killed (default: 10)")
    .example("delta mcp serve --agent ./auditor")
    .example("delta mcp serve --agent ./auditor --http 8765")
    .action(dispatch(async (args, flags, io) => {
      if (args[0] !== "serve") throw new UsageError(`Unknown mcp action '${args[0]}'. Use: delta mcp serve --agent <agent dir | agent.yaml>`);
      return (await import("./commands/mcp-serve.js")).mcpServe(flags, io);
    }));
  cli
    .command("tool:expand <path>", "Same as `delta tool expand <path>`")
    .action(dispatch(async (args, _flags, io) => (await import("./commands/tool-expand.js")).toolExpand(String(args[0]), io)));
  // `delta init --help` names the templates it can copy.
  cli.help((sections) => (cli.matchedCommand?.name === "init" ? [...sections, { title: "Templates", body: listTemplates().map((name) => `  ${name}`).join("\n") }] : sections));
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
  const known = err instanceof DeltaError ? err : isCacError(err) ? new UsageError(`${asTyped(err.message, argv)}. See: ${helpFor(argv)}`) : null;
  const format = argValue(argv, ["--format"]);
  const [type, message, exitCode] = known ? [known.type, known.message, known.exitCode] : ["INTERNAL_ERROR", String(err), EXIT.FAILED];
  io.err(known ? `Error: ${message}\n` : `Internal error (please report it): ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  // json and stream-json promise one RunResult for every outcome, refusals included.
  const status = exitCode === EXIT.REFUSED ? "REFUSED" : exitCode === EXIT.INTERRUPTED ? "INTERRUPTED" : "FAILED";
  const result = refusal(argv, { type, message, status, agentName: known?.agentName ?? null });
  if (format === "json") io.out(`${JSON.stringify(result, null, 2)}\n`);
  if (format === "stream-json") io.out(`${JSON.stringify(result)}\n`);
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
function refusal(argv: readonly string[], { type, message, status, agentName }: Refusal): Record<string, unknown> {
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

/** cac names an unknown option by its camelCase key (`--outputSchema`); the person typed `--output-schema`. */
function asTyped(message: string, argv: readonly string[]): string {
  const unknown = /^Unknown option `-{1,2}([^`]+)`$/.exec(message);
  if (!unknown) return message;
  // `--no-x` is cac's negation of `x`: it reports the key without the `no-`.
  const keysOf = (name: string): string[] => [camelCase(name), ...(name.startsWith("no-") ? [camelCase(name.slice(3))] : [])];
  const typed = argv.find((token) => token.startsWith("-") && keysOf(token.replace(/^-+/, "").split("=")[0]!).includes(unknown[1]!));
  return typed === undefined ? message : `Unknown option \`${typed.split("=")[0]}\``;
}

function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

/** `delta <command> --help` when a command was named, else `delta --help`. */
function helpFor(argv: readonly string[]): string {
  const command = argv[0];
  return command !== undefined && !command.startsWith("-") ? `delta ${command} --help` : "delta --help";
}

function isCacError(err: unknown): err is Error {
  return err instanceof Error && err.name === "CACError";
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  takeDeferredCaCerts();
  let result: Promise<number> | null = null;
  const dispatch = (handler: Handler) => (...raw: unknown[]): void => {
    const flags = unprotectAll(raw.pop() as Flags);
    // An optional argument not given stays undefined (String() would make it the word "undefined").
    const args = raw.map((value) => (value === undefined ? undefined : String(unprotect(value))));
    result = handler(args, flags, io);
  };
  const cli = buildCli(dispatch);
  try {
    // -V as most tools spell it; -v too, but only without a command (within `run` it is --verbose).
    if (argv.length === 1 && argv[0] === "-V") return await main(["--version"], io);
    // `delta help [command]` is `delta [command] --help`.
    if (argv[0] === "help") return await main(argv.length > 1 ? [...argv.slice(1, 2), "--help"] : ["--help"], io);
    // Checked before parsing: cac would print the global help for `delta no-such-command --help` and exit 0.
    const named = argv[0];
    if (named !== undefined && !named.startsWith("-") && !cli.commands.some((command) => command.name === named)) {
      throw new UsageError(`Unknown command '${named}'. See: delta --help`);
    }
    cli.parse(["node", "delta", ...protectValues(argv, valueOptions(cli))], { run: false });
    // cac has printed the help (of the command named, if any); no command runs.
    if (cli.options.help) return 0;
    if (!cli.matchedCommand) {
      // `-v` is --version only without a command; within `run` it is --verbose.
      if (cli.options.version) return 0;
      cli.outputHelp();
      return 0;
    }
    await cli.runMatchedCommand();
    return result === null ? 0 : await result;
  } catch (err) {
    return report(err, argv, io);
  }
}

void main(process.argv.slice(2), processIo).then((code) => process.stdout.write("", () => process.exit(code)));
