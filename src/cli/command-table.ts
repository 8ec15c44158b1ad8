// The command table: every command of `delta`, its arguments, options and help, in one place (cac's).
// The rules of every command line (cli/parse-argv.ts), --json and the help are read from it: a command added here gets them all.
import { resolve } from "node:path";
import { cac } from "cac";
import { ENGINE_VERSION } from "../engine-version.js";
import { didYouMean } from "../did-you-mean.js";
import { UsageError } from "../errors.js";
import type { CliIo } from "./io.js";
import { STDIN_LIMIT_BYTES } from "./message-input.js";
import { optionalString } from "./options.js";
import { DEFAULT_TEMPLATE, listTemplates } from "./templates.js";

/** Where run, continue, show, report and list-runs look without -w or --agent: where `run` puts its runs. */
const WHERE_RUNS_ARE = "in an agent's folder, its workspaces; elsewhere the current directory";

export type Flags = Record<string, unknown>;
export type Handler = (args: (string | undefined)[], flags: Flags, io: CliIo) => Promise<number>;
type CommandTable = ReturnType<typeof cac>;

/** A command's action, typed: main runs it with the command's words (one per declared argument), its flags and the output port. */
const handler = (run: Handler): Handler => run;

/** The table: every command, its arguments, options, help and action. */
export function buildCli(): CommandTable {
  const cli = cac("delta");
  cli
    .command("run [task]", "Start a new run of an agent")
    .usage('run [--agent <dir>] "<task>" [options]\n\n  Required: the task, as one argument (quoted), -m <text>, --message-file <path> or a piped stdin;\n  the agent is the current directory unless --agent names it.')
    .option("--agent <path>", "Agent directory, or its agent.yaml", { default: "." })
    .option("-m, --message <text>", "The task, in place of the argument (not empty); `-m -` reads it from stdin, as does a piped stdin without a task")
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
    .option("--until-divergence", "With --replay <run folder>: play recorded replies while each request equals the recorded one, then ask the model (needs a key) from the first that differs, journaled")
    .option("--replay-strict", "With --replay <run folder>: end FAILED (REPLAY_DIVERGED) at the first request that differs from the recorded one, with no model called")
    .option("--output-schema <file>", "JSON Schema (JSON or YAML) the final answer must meet, for this run (in place of output_schema in agent.yaml)")
    .option("--sandbox <mode>", "Box every tool and MCP server for this run: read-only | workspace-write | off (off warns when the agent asks for one)")
    .example('delta run --agent ./my-agent "Summarise sales.csv"')
    .example('cat report.txt | delta run --agent ./my-agent "Summarise this" --stdin --json')
    .option("--base-url <url>", "Model endpoint for this invocation (over DELTA_BASE_URL, .env files and llm.base_url)")
    .option("--if-exists <action>", "When --run-id is taken in -w: refuse (default) | resume (the same task's run: its result again, or continued)")
    .option("--max-cost-usd <dollars>", "The run's budget in USD over all its invocations (over llm.budget.max_cost_usd); a call that could pass it is not sent, the run ends DEFERRED (75); needs llm.pricing")
    .option("--budget-file <ledger>", "Reserve each model call in this fleet ledger, shared by many runs (made by `delta budget init`); default: $DELTA_BUDGET_FILE")
    .option("--batch", "Queue each model call for the provider's batch API at its discount (as llm.batch: true): the run ends DEFERRED (75) until `delta batch submit` sends it and `continue --due` collects the reply")
    .option("--submit", "With --batch: send the queued call in a batch of its own at once")
    .action(handler(async (args, flags, io) => (await import("./commands/run.js")).runCommand(args[0], flags, io)));
  cli
    .command("continue [message]", "Continue an existing run (resume, answer, extend or retry)")
    .usage('continue (--run-id <id> | --last) ["<message>"] [options]\n\n  The message (a new instruction, or the answer to the open question) is one argument (quoted), or -m <text>.')
    .option("--run-id <id>", "The run to continue")
    .option("--last", "Continue the newest run (of the workspace, or of the agent with --agent; with neither and no run here, your most recent run anywhere)")
    .option("-w, --work-dir <path>", `Workspace holding the run (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look for the run in every workspace of this agent (directory or agent.yaml)")
    .option("-m, --message <text>", "The message, in place of the argument; `-m -` reads it from stdin")
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
    .option("--until-divergence", "With --replay <run folder>: recorded replies while each request equals the recorded one, then the model")
    .option("--replay-strict", "With --replay <run folder>: end FAILED (REPLAY_DIVERGED) at the first request that differs from the recorded one")
    .option("--sandbox <mode>", "Change the run's sandbox mode from now on: read-only | workspace-write | off (journaled)")
    .option("--base-url <url>", "Model endpoint for this invocation; the run moves there on purpose")
    .option("--accept-endpoint", "Continue even though the model endpoint differs from the one the run started with")
    .option("--max-cost-usd <dollars>", "The run's budget in USD over all its invocations, from now on: raises (or lowers) the one it had; needs llm.pricing")
    .option("--budget-file <ledger>", "Reserve each model call in this fleet ledger (made by `delta budget init`); default: $DELTA_BUDGET_FILE, else the ledger the run had")
    .option("--due", "Continue every DEFERRED run of the workspaces (-w, once or more, or --agent) whose time has come: each with its own `delta continue`, one line per run (--format json: one RunResult per line), exit the worst code")
    .option("-j, --jobs <n>", "With --due: how many runs to continue at a time (default: 1)")
    .option("--live", "Send a model call waiting in a batch live instead, and queue none in this invocation")
    .example("delta continue --due -w ./ws -j 8          # from cron or a systemd timer: every deferred run whose limit has reset")
    .action(handler(async (args, flags, io) => (await import("./commands/run.js")).continueCommandLine(args[0], flags, io)));
  cli
    .command("list-runs", "List runs, newest first")
    .option("-w, --work-dir <path>", `Workspace (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Every workspace of this agent (directory or agent.yaml)")
    .option("--resumable", "Only unfinished runs: FAILED, INTERRUPTED, WAITING_FOR_INPUT, DEFERRED, and RUNNING ones whose holder is dead (runs held on other hosts are checked as with --check-liveness)")
    .option("--due", "Only DEFERRED runs whose time has come (resume_after passed, or unknown): what `delta continue --due` resumes")
    .option("--status <status>", "Only runs with this status")
    .option("--first", "Only the most recent run")
    .option("--size", "Show the bytes each run folder holds: in all, its journal, its io/")
    .option("--check-liveness", "Watch the heartbeat of runs held on other hosts (one stale period, 10 s by default, for all of them)")
    .option("--format <format>", "Output: text | json | raw (raw: one run id per line)")
    .action(handler(async (_args, flags, io) => (await import("./commands/list-runs.js")).listRunsCommand(flags, io)));
  cli
    .command("prune", "Remove finished runs (or only their io/) older than an age or beyond a count; lists them unless --yes")
    .option("-w, --work-dir <path>", "Workspace (default: current directory)")
    .option("--agent <path>", "Every workspace of this agent (directory or agent.yaml)")
    .option("--older-than <age>", "Only runs last updated longer ago than this: 30m, 12h, 7d, 2w")
    .option("--keep <n>", "Keep the n newest runs of that status; only older ones may go")
    .option("--status <status>", "COMPLETED (default), or FAILED or INTERRUPTED (resumable runs: only when named); DEFERRED runs are always kept")
    .option("--io-only", "Remove only each run's io/; its journal still shows and continues it")
    .option("--yes", "Remove them; without it prune only lists what it would remove")
    .option("--format <format>", "Output: text | json")
    .action(handler(async (_args, flags, io) => (await import("./commands/prune.js")).pruneCommand(flags, io)));
  cli
    .command("show [run-id]", "Show a run as readable text: task, iterations, tool calls, tokens, status, how to go on")
    .option("-w, --work-dir <path>", `Workspace holding the run (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look in the agent's workspaces (W001, W002…) instead")
    .option("--last", "The most recently updated run (with neither -w nor --agent and no run here: your most recent run anywhere)")
    .option("-f, --follow", "Keep printing events as the run appends them, until it ends")
    .option("--full", "Print thoughts and tool output whole, not their first lines")
    .option("--request <n>", "Print the model request of iteration n as JSON, rebuilt from io/invocations/")
    .action(handler(async (args, flags, io) => (await import("./commands/show.js")).showCommand(args[0], flags, io)));
  cli
    .command("report [run-id]", "Write a self-contained HTML report of a run, or of every run of a workspace (no run id)")
    .option("-w, --work-dir <path>", `Workspace holding the runs (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look in the agent's workspaces (W001, W002…) instead")
    .option("--last", "The most recently updated run (with neither -w nor --agent and no run here: your most recent run anywhere)")
    .option("-o, --output <file>", "Where to write the HTML (default: stdout; on a terminal, <run-id>.html in the current directory)")
    .action(handler(async (args, flags, io) => (await import("./commands/report.js")).reportCommand(args[0], flags, io)));
  cli
    .command("verify [run-id]", "Say whether a run's journal is still what the engine wrote, and where it was edited: exit 0 intact, 1 broken, 2 unchained (written before the hash chain)")
    .option("-w, --work-dir <path>", `Workspace holding the run (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look in the agent's workspaces (W001, W002…) instead")
    .option("--last", "The most recently updated run (with neither -w nor --agent and no run here: your most recent run anywhere)")
    .option("--format <format>", "Output: text | json (default: text)")
    .example("delta verify job-7 -w ./W003")
    .example("delta verify --last --json | jq -r .head   # the hash to keep where the run folder's writers cannot reach")
    .action(handler(async (args, flags, io) => (await import("./commands/verify.js")).verifyCommand(args[0], flags, io)));
  cli
    .command("export [run-id]", "Export a run's spans (or every run's of a workspace or agent) from the journal: to an OTLP collector, or as OTLP/JSON")
    .option("-w, --work-dir <path>", `Workspace holding the runs (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look in the agent's workspaces (W001, W002…) instead")
    .option("--last", "The most recently updated run (with neither -w nor --agent and no run here: your most recent run anywhere)")
    .option("--otlp", "Send the spans to an OTLP/HTTP collector (OTEL_EXPORTER_OTLP_* as for live export)")
    .option("--endpoint <url>", "The collector, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT, else that)")
    .option("--format <format>", "otlp-json: write the spans as one OTLP/JSON ExportTraceServiceRequest")
    .option("-o, --output <file>", "Where --format otlp-json writes (default: stdout)")
    .example("delta export run-42 -w ./W001 --otlp --endpoint http://localhost:4318")
    .example("delta export --last -w ./W001 --format otlp-json -o trace.json")
    .action(handler(async (args, flags, io) => (await import("./commands/export.js")).exportCommand(args[0], flags, io)));
  cli
    .command("fork [run]", "Start a new run from another's journal through iteration N (its io records copied, the source untouched); go on with `delta continue -m`")
    .usage("fork <run> --at <iteration> [--run-id <new id>] [-w <workspace>] [--format text|json]\n\n  The run is a run id (in -w, else found as `show` finds it) or a run folder's path. The fork works in -w, else in the\n  source's workspace as it is now: a workspace is never copied (snapshot it with git or cp --reflink first).")
    .option("--at <iteration>", "The last iteration the fork keeps (whole: every tool call of it answered)")
    .option("--run-id <id>", "The fork's run id (1-128 of A-Z a-z 0-9 . _ -; default: a new one)")
    .option("-w, --work-dir <path>", "The fork's workspace, made when missing (default: the source's workspace, shared as it is now)")
    .option("--agent <path>", "Look for the run in every workspace of this agent (directory or agent.yaml)")
    .option("--format <format>", "Output: text | json")
    .example("delta fork run-42 --at 3 -w ./W001 --run-id run-42-b && delta continue --run-id run-42-b -w ./W001 \"Try the other approach\"")
    .action(handler(async (args, flags, io) => (await import("./commands/fork.js")).forkCommand(args[0], flags, io)));
  cli
    .command("diff [run-a] [run-b]", "Compare two runs: the first model request where they differ (model, parameters, system prompt, tools, messages) as a diff of its parts, then each iteration's tool calls side by side; exit 0 when every request is equal, 1 when one differs")
    .usage("diff <run-a> <run-b> [-w <dir> | --agent <dir>] [--format text|json]\n\n  Each run is a run id (found as `show` finds it) or a run folder's path (<workspace>/.delta/<run-id>, a copied one included).")
    .option("-w, --work-dir <path>", `Workspace holding the runs named by id (default: ${WHERE_RUNS_ARE})`)
    .option("--agent <path>", "Look for the runs named by id in every workspace of this agent (directory or agent.yaml)")
    .option("--format <format>", "Output: text | json (json: the difference itself, not a RunResult)")
    .example("delta diff run-before run-after -w ./W001")
    .example("delta diff ./recorded/.delta/ci-41-1 ./.delta/ci-42-1 --json")
    .action(handler(async (args, flags, io) => (await import("./commands/diff.js")).diffCommand(args[0], args[1], flags, io)));
  cli
    .command("schema [file]", "Print the JSON Schema of agent.yaml, context.yaml or hooks.yaml (for editors)")
    .usage("schema <agent|context|hooks>")
    .action(handler(async (args, _flags, io) => (await import("./commands/schema.js")).schemaCommand(args[0], io)));
  cli
    .command("init [name]", "Create a new agent directory from a template")
    .option("-t, --template <template>", `Template name (default: ${DEFAULT_TEMPLATE})`)
    .option("-y, --yes", "Never prompt")
    .example("delta init my-agent -t minimal")
    .action(handler(async (args, flags, io) =>
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
    .action(handler(async (args, flags, io) => {
      if (args[0] !== "expand" && args[0] !== "list") throw new UsageError(`Unknown tool action '${args[0]}'.${didYouMean(String(args[0]), ["expand", "list"])} Use: delta tool expand <agent dir | agent.yaml>, or delta tool list <agent dir | agent.yaml>`);
      const target = theAgent(`tool ${args[0]}`, args[1], flags);
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
    .action(handler(async (args, flags, io) => {
      if (args[0] !== "list") throw new UsageError(`Unknown skills action '${args[0]}'.${didYouMean(String(args[0]), ["list"])} Use: delta skills list --agent <agent dir | agent.yaml>`);
      const target = theAgent("skills list", args[1], flags) ?? ".";
      return (await import("./commands/skills-list.js")).skillsList(target, flags, io);
    }));
  cli
    .command("mcp <action>", "Offer an agent's runs as MCP tools (run, continue, answer, status, result) to Claude Code, Codex or any MCP client")
    .usage("mcp serve --agent <agent> [-w <workspace>] [--http <port> [--host <address>] [--token-file <file>] [--idle-timeout <seconds>]] [--term-grace <seconds>]")
    .option("--agent <path>", "Agent directory, or its agent.yaml", { default: "." })
    .option("-w, --work-dir <path>", "Workspace of every run (default: a new W00N under the agent per server start)")
    .option("--http <port>", "Serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio (0: any free port)")
    .option("--host <address>", "Address to bind with --http (default: 127.0.0.1)")
    .option("--token-file <file>", "With --http: the bearer token every request must carry, from this file (yours, mode 600); default $DELTA_MCP_TOKEN, else one made in $XDG_STATE_HOME/delta/mcp-token")
    .option("--idle-timeout <seconds>", "With --http: a session with no request and no open stream this long is taken as gone, its runs interrupted (default: 300)")
    .option("--term-grace <seconds>", "How long an interrupted run has to end after SIGTERM before it is killed (default: 10)")
    .example("delta mcp serve --agent ./auditor")
    .example("delta mcp serve --agent ./auditor --http 8765")
    .action(handler(async (args, flags, io) => {
      if (args[0] !== "serve") throw new UsageError(`Unknown mcp action '${args[0]}'.${didYouMean(String(args[0]), ["serve"])} Use: delta mcp serve --agent <agent dir | agent.yaml>`);
      return (await import("./commands/mcp-serve.js")).mcpServe(flags, io);
    }));
  cli
    .command("budget <action> <ledger>", "A fleet's budget ledger, shared by runs on one machine or a shared file system: init makes one, show prints it, set changes its limit")
    .usage("budget init <ledger> --limit-usd <dollars>\n  $ delta budget show <ledger> [--format json]\n  $ delta budget set <ledger> --limit-usd <dollars>")
    .option("--limit-usd <dollars>", "init, set: the fleet's limit in USD")
    .option("--format <format>", "show: text | json (default: text)")
    .example("delta budget init /shared/fleet.budget --limit-usd 100")
    .example("DELTA_BUDGET_FILE=/shared/fleet.budget delta run --agent ./agent \"…\"   # each model call reserved in the ledger")
    .example("delta budget show /shared/fleet.budget")
    .action(handler(async (args, flags, io) => {
      const actions = ["init", "show", "set"] as const;
      const action = actions.find((known) => known === args[0]);
      if (action === undefined) throw new UsageError(`Unknown budget action '${args[0]}'.${didYouMean(String(args[0]), actions)} Use: delta budget init|show|set <ledger>`);
      return (await import("./commands/budget.js")).budgetCommand(action, String(args[1]), flags, io);
    }));
  cli
    .command("batch <action>", "Model calls queued for the providers' batch APIs (runs with llm.batch or --batch): submit sends them, status counts them, cancel stops their batches")
    .usage("batch submit -w <workspace>… [--resubmit]\n  $ delta batch status -w <workspace>… [--format json]\n  $ delta batch cancel -w <workspace>…")
    .option("-w, --work-dir <path>", "A workspace whose runs' calls to take (give -w once or more)")
    .option("--agent <path>", "Every workspace of this agent (directory or agent.yaml)")
    .option("--resubmit", "submit: send again the calls of a submission in doubt (its answer was lost and the provider keeps nothing to look it up by); they may be billed twice")
    .option("--format <format>", "Output: text | json (default: text)")
    .example("delta batch submit -w ./ws      # nightly: every queued call, one batch per endpoint and key")
    .example("delta continue --due -w ./ws    # later: collect the ended batches; each run goes on to its next call")
    .action(handler(async (args, flags, io) => {
      const actions = ["submit", "status", "cancel"] as const;
      const action = actions.find((known) => known === args[0]);
      if (action === undefined) throw new UsageError(`Unknown batch action '${args[0]}'.${didYouMean(String(args[0]), actions)} Use: delta batch submit|status|cancel -w <workspace>`);
      return (await import("./commands/batch.js")).batchCommand(action, flags, io);
    }));
  cli
    .command("tool:expand <path>", "Same as `delta tool expand <path>`")
    .action(handler(async (args, _flags, io) => (await import("./commands/tool-expand.js")).toolExpand(String(args[0]), io)));
  // `delta init --help` names the templates it can copy.
  cli.help((sections) => (cli.matchedCommand?.name === "init" ? [...sections, { title: "Templates", body: listTemplates().map((name) => `  ${name}`).join("\n") }] : sections));
  // -V as delta-sessions and most tools spell it: -v is --verbose, within run and continue.
  cli.version(ENGINE_VERSION, "-V, --version");
  addJsonShorthand(cli);
  return cli;
}

/** The agent of `tool` and `skills`: the path argument or --agent, named once; two different ones are refused, never one of them dropped. */
function theAgent(line: string, path: string | undefined, flags: Flags): string | undefined {
  const option = optionalString("--agent", flags.agent);
  if (path !== undefined && option !== undefined && resolve(path) !== resolve(option)) {
    throw new UsageError(`delta ${line} was given two agents: ${path} and --agent ${option}; give one of them.`);
  }
  return path ?? option;
}

/** Every command whose --format offers json also takes --json, as peers spell it; a command added later gets it too. */
function addJsonShorthand(cli: CommandTable): void {
  for (const command of cli.commands) {
    const format = command.options.find((option) => option.names.includes("format"));
    if (format !== undefined && format.description.split(/[\s|,:()]+/).includes("json")) command.option("--json", "Same as --format json");
  }
}
