// Where the message of `run` and `continue` comes from: -m text, -m - (stdin), --message-file, or for `run` a piped stdin.
import { fstatSync, readFileSync } from "node:fs";
import { text } from "node:stream/consumers";
import { errorMessage, UsageError } from "../errors.js";
import { optionalString } from "./options.js";

export interface MessageSources {
  /** `run` takes a piped stdin as its task when no message was given; `continue` never reads stdin unasked (it runs in `while read` loops). */
  stdinWhenPiped: boolean;
  /** -i answers questions from stdin, so stdin cannot also carry the message. */
  interactive: boolean;
}

/** The message given, or undefined when none was. */
export async function readMessage(flags: Record<string, unknown>, sources: MessageSources): Promise<string | undefined> {
  const message = optionalString("-m/--message", flags.message);
  const file = optionalString("--message-file", flags.messageFile);
  if (message !== undefined && file !== undefined) throw new UsageError("Give the message once: -m <text>, -m - (stdin) or --message-file <path>, not both.");
  if (file !== undefined) return fromFile(file);
  if (message === "-") {
    if (sources.interactive) throw new UsageError("-m - reads the message from stdin, which -i needs for answers; use --message-file <path> with -i.");
    return nonEmpty(await readStdin(), "-m - (stdin)");
  }
  if (message !== undefined) return message;
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

async function readStdin(): Promise<string> {
  return text(process.stdin);
}

/** The text without the one newline that ends a file or an `echo`; refused when nothing is left. */
function nonEmpty(content: string, from: string): string {
  const message = content.replace(/\r?\n$/, "");
  if (message.trim() === "") throw new UsageError(`The message from ${from} is empty; give the task there, or with -m <text>.`);
  return message;
}
