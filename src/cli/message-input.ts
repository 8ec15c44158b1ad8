// Where the message of `run` and `continue` comes from: -m text, -m - (stdin), --message-file, --stdin after -m, or for `run` a piped stdin.
import { fstatSync, readFileSync } from "node:fs";
import shellQuote from "shell-quote";
import { errorMessage, UsageError } from "../errors.js";
import { optionalString } from "./options.js";

/** What `--stdin` appends after the message at most: more is refused (a log of gigabytes is not a task). */
export const STDIN_LIMIT_BYTES = 1024 * 1024;

interface MessageSources {
  /** `run` takes a piped stdin as its task when no message was given; `continue` never reads stdin unasked (it runs in `while read` loops). */
  stdinWhenPiped: boolean;
  /** -i answers questions from stdin, so stdin cannot also carry the message. */
  interactive: boolean;
  /** The message as the command's argument (`delta run "task"`), which is -m by another name. */
  argument: string | undefined;
  /** What the message is called in a refusal: "task" for run, "message" for continue. */
  called: string;
}

/** The message given, or undefined when none was. */
export async function readMessage(flags: Record<string, unknown>, sources: MessageSources): Promise<string | undefined> {
  const option = optionalString("-m/--message", flags.message);
  const file = optionalString("--message-file", flags.messageFile);
  const appendStdin = Boolean(flags.stdin);
  if (sources.argument !== undefined && (option !== undefined || file !== undefined)) throw givenTwice(sources, option, file);
  const message = sources.argument ?? option;
  if (message !== undefined && file !== undefined) throw new UsageError("Give the message once: -m <text>, -m - (stdin) or --message-file <path>, not both.");
  if (appendStdin && message === "-") throw new UsageError("-m - already reads the message from stdin; drop --stdin, or give the message with -m <text>.");
  if (appendStdin && sources.interactive) throw new UsageError("--stdin reads stdin, which -i needs for answers; use --message-file <path> with -i.");
  const given = await givenMessage(message, file, sources);
  if (!appendStdin) return given;
  if (!stdinIsPipedData()) throw new UsageError("--stdin appends piped data to the message, but stdin is not a pipe or a file; pipe the data in (`cat data.txt | delta … --stdin`), or drop --stdin.");
  const data = await readStdin();
  if (given === undefined) return nonEmpty(data, "--stdin");
  return data.trim() === "" ? given : `${given}\n\n${data.replace(/\r?\n$/, "")}`;
}

/**
 * The argument and -m (or --message-file) both carry a message: one of them is not what it was meant to be — in
 * other agent CLIs -m is the model (`codex exec -m gpt-4o "task"`). Refused rather than one of them dropped.
 */
function givenTwice(sources: MessageSources, option: string | undefined, file: string | undefined): UsageError {
  const other = option !== undefined ? `-m ${JSON.stringify(option)}` : `--message-file ${file}`;
  const model = option !== undefined ? ` Here -m is the ${sources.called}; the model is --model (e.g. --model ${shellQuote.quote([option])}).` : "";
  return new UsageError(`The ${sources.called} was given twice: as ${JSON.stringify(sources.argument)} and as ${other}.${model} Give the ${sources.called} once.`);
}

async function givenMessage(message: string | undefined, file: string | undefined, sources: MessageSources): Promise<string | undefined> {
  if (file !== undefined) return fromFile(file);
  if (message === "-") {
    if (sources.interactive) throw new UsageError("-m - reads the message from stdin, which -i needs for answers; use --message-file <path> with -i.");
    return nonEmpty(await readStdin(), "-m - (stdin)");
  }
  if (message !== undefined) {
    // `-m "$TASK"` or `"$TASK"` with TASK unset: a real, billed run with no task helps no one.
    if (message.trim() === "") {
      const given = sources.argument !== undefined ? `The ${sources.called}` : "-m/--message";
      throw new UsageError(`${given} is empty (is the variable it came from unset?); give the ${sources.called}, e.g. "Summarise sales.csv".`);
    }
    return message;
  }
  if (sources.stdinWhenPiped && !sources.interactive && stdinIsPipedData()) return nonEmpty(await readStdin(), "the piped stdin");
  return undefined;
}

function fromFile(file: string): string {
  if (file === "") throw new UsageError("--message-file needs a path.");
  let content: string;
  try {
    content = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "a directory, not a file" : errorMessage(err);
    throw new UsageError(`--message-file ${file}: ${why}; give a file holding the message.`);
  }
  return nonEmpty(content, `--message-file ${file}`);
}

/** A pipe (a socket pair, when the parent is Node) or a redirected file; not a terminal, /dev/null or a closed stdin. */
function stdinIsPipedData(): boolean {
  try {
    const info = fstatSync(0);
    return info.isFIFO() || info.isSocket() || info.isFile();
  } catch {
    return false;
  }
}

/** All of stdin, refused past STDIN_LIMIT_BYTES without reading the rest. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > STDIN_LIMIT_BYTES) {
      process.stdin.destroy();
      throw new UsageError(`stdin holds more than ${STDIN_LIMIT_BYTES / 1024 / 1024} MiB; a task that large belongs in a file the agent's tools read (name it in -m), not in the message.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The text without the one newline that ends a file or an `echo`; refused when nothing is left. */
function nonEmpty(content: string, from: string): string {
  const message = content.replace(/\r?\n$/, "");
  if (message.trim() === "") throw new UsageError(`The message from ${from} is empty; give the task there, or with -m <text>.`);
  return message;
}
