// The delta-sessions CLI: argv → one sessions operation → one JSON value on stdout, or a one-line error on stderr and exit 1.
// stdout carries only JSON results; warnings and errors go to stderr.
import "../zod-config.js";
import { text } from "node:stream/consumers";
import { cac, type CAC } from "cac";
import shellQuote from "shell-quote";
import { z } from "zod";
import { ENGINE_VERSION } from "../engine-version.js";
import { errorMessage } from "../errors.js";
import { takeDeferredCaCerts } from "../llm/transport/deferred-ca.js";
import { DEFAULT_OUTPUT_LIMIT_BYTES } from "./run-wrapper.js";
import { endSession } from "./end.js";
import { SessionError } from "./errors.js";
import { DEFAULT_TIMEOUT_MS, execInSession } from "./exec.js";
import { parseSessionId } from "./ids.js";
import { startSession } from "./start.js";
import { listSessions, resolveSessionsRoot } from "./store.js";

const SessionsDirSchema = z.union([z.string().min(1), z.number()]).transform(String).optional();
const TimeoutSchema = z.number().int().positive().max(24 * 60 * 60 * 1000).default(DEFAULT_TIMEOUT_MS);

interface RawOptions {
  sessionsDir?: unknown;
  timeoutMs?: unknown;
  "--"?: string[];
}

const writeJson = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);
const warn = (message: string): void => void process.stderr.write(`delta-sessions: warning: ${message}\n`);

function sessionsRoot(options: RawOptions): string {
  const parsed = SessionsDirSchema.safeParse(options.sessionsDir);
  if (!parsed.success) throw new SessionError("--sessions-dir needs a directory path, e.g. --sessions-dir ./.sessions");
  return resolveSessionsRoot(parsed.data, process.env, process.cwd());
}

function timeoutMs(options: RawOptions): number {
  const parsed = TimeoutSchema.safeParse(options.timeoutMs);
  if (!parsed.success) throw new SessionError(`--timeout-ms must be a whole number of milliseconds between 1 and 86400000, got ${JSON.stringify(options.timeoutMs)}`);
  return parsed.data;
}

/** `start "python3 -q"` is split like a shell would; `start python3 -- -q` is taken word by word. */
function shellArgv(words: string[], options: RawOptions): string[] {
  const all = [...words, ...(options["--"] ?? [])];
  const single = all.length === 1 ? all[0] : undefined;
  if (single === undefined) return all;
  const tokens = shellQuote.parse(single);
  const argv = tokens.filter((token): token is string => typeof token === "string");
  if (argv.length !== tokens.length || argv.length === 0) {
    throw new SessionError(`cannot use ${JSON.stringify(single)} as a session command: give a program and its arguments, without pipes, redirections or variables`);
  }
  return argv;
}

async function commandText(words: string[], options: RawOptions): Promise<string> {
  const all = [...words, ...(options["--"] ?? [])];
  if (all.length > 1) {
    throw new SessionError(`exec takes the command as one argument (quote it) or on stdin; got ${all.length} arguments`);
  }
  if (all[0] !== undefined) return all[0];
  if (process.stdin.isTTY) throw new SessionError("no command: pass it as one argument or pipe it on stdin");
  return text(process.stdin);
}

function buildCli(): CAC {
  const cli = cac("delta-sessions");
  cli.option("--sessions-dir <dir>", "Where sessions live (default: $DELTA_SESSIONS_DIR or ./.sessions)");

  cli.command("start [...shell]", "Start a session running bash, or the given shell or interpreter").action(
    async (shell: string[], options: RawOptions) => {
      writeJson(
        await startSession({
          root: sessionsRoot(options),
          argv: shellArgv(shell, options),
          cwd: process.cwd(),
          env: process.env,
          outputLimitBytes: DEFAULT_OUTPUT_LIMIT_BYTES,
        }),
      );
    },
  );

  cli
    .command("exec <session_id> [...command]", "Run a command (argument or stdin) in a session")
    .option("--timeout-ms <ms>", "Kill the command after this long", { default: DEFAULT_TIMEOUT_MS })
    .action(async (id: string, command: string[], options: RawOptions) => {
      writeJson(
        await execInSession({
          root: sessionsRoot(options),
          id: parseSessionId(id),
          command: await commandText(command, options),
          timeoutMs: timeoutMs(options),
          outputLimitBytes: DEFAULT_OUTPUT_LIMIT_BYTES,
          warn,
        }),
      );
    });

  cli.command("end <session_id>", "End a session and remove its state").action(async (id: string, options: RawOptions) => {
    writeJson(await endSession(sessionsRoot(options), parseSessionId(id), { waitMs: DEFAULT_TIMEOUT_MS, warn }));
  });

  cli.command("list", "List sessions, oldest first").action(async (options: RawOptions) => {
    writeJson(await listSessions(sessionsRoot(options), warn));
  });

  cli.help();
  cli.version(ENGINE_VERSION, "-V, --version");
  return cli;
}

/** Returns the process exit code: 0 when the operation ran (whatever the command's own exit code), 1 otherwise. */
async function main(argv: string[]): Promise<number> {
  // The shells a session starts inherit NODE_EXTRA_CA_CERTS as the user set it (see bin/delta-sessions.js).
  takeDeferredCaCerts();
  try {
    const cli = buildCli();
    cli.parse(["node", "delta-sessions", ...argv], { run: false });
    // cac has printed the help or the version.
    if (cli.options.help || cli.options.version) return 0;
    if (cli.matchedCommand === undefined) {
      const given = cli.args[0];
      throw new SessionError(
        given === undefined ? "missing command: use start, exec, end or list (see --help)" : `unknown command "${given}": use start, exec, end or list (see --help)`,
      );
    }
    await cli.runMatchedCommand();
    return 0;
  } catch (err) {
    process.stderr.write(`delta-sessions: ${errorMessage(err).replace(/\s*\n\s*/g, " ")}\n`);
    return 1;
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
