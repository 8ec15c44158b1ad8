// Walks a sh script's quoting (top level, "…", '…', `…`, $( … )) and its words, so `${…}` placeholders can be rewritten for the quotes they sit in and judged by the words before them.

/** Where a placeholder sits: outside quotes (in `…` and $( … ) too), inside "…", or inside '…'. */
export type Quoting = "unquoted" | "double" | "single";

/** Where a placeholder stands among the words of its simple command, as far as the script's own text tells. */
export interface WordPlace {
  /** Nothing but quotes comes before it in its word: its value begins an argv entry. */
  beginsWord: boolean;
  /** It begins the command's first word: the value is the program's name, no argument. */
  firstWord: boolean;
  /** An earlier word of the same command is exactly `--`. */
  afterDoubleDash: boolean;
  /** The word just before it is an option written in the script (`-m`, `--file`), which may take it as its argument. */
  afterOption: string | null;
  /** It is the file of a redirection (`< ${f}`, `> ${f}`). */
  afterRedirect: boolean;
}

/**
 * Called with the index of each `${`, the quoting around it, the index its `}` must come before
 * (the closing quote of '…') and its place among the words; returns the text to put in its place and the index just
 * past what it replaces, or undefined to keep the `${` as written.
 */
type PlaceholderRewrite = (start: number, quoting: Quoting, limit: number, place: WordPlace) => { text: string; end: number } | undefined;

export class UnbalancedScriptError extends Error {}

type Frame = { kind: "top" | "double" | "backtick" } | { kind: "subshell"; depth: number };

/** An option written whole, which may take the next word as its argument: `-m`, `-am`, `--file` (not `--file=x`, not `-` or `--`). */
const OPTION_WORD = /^(-[^-\s=][^\s=]*|--[^\s=]+)$/;

function unquoted(word: string): string {
  return word.replace(/["']/g, "");
}

/** The words of one simple command so far: a new one starts after `;`, `&`, `|`, a newline, `(` or `)`, and inside `…` and $( … ). */
class Command {
  private words: string[] = [];
  private current = "";
  private redirect = false;
  private redirectWord = false;

  /** A character (or placeholder marker) of the current word. */
  add(text: string): void {
    if (this.current === "" && this.redirect) {
      this.redirect = false;
      this.redirectWord = true;
    }
    this.current += text;
  }

  endWord(): void {
    if (this.current !== "" && !this.redirectWord) this.words.push(this.current);
    this.current = "";
    this.redirectWord = false;
  }

  endCommand(): void {
    this.endWord();
    this.words = [];
    this.redirect = false;
  }

  redirection(): void {
    this.endWord();
    this.redirect = true;
  }

  place(): WordPlace {
    const beginsWord = unquoted(this.current) === "";
    const previous = this.words.at(-1);
    const option = beginsWord && previous !== undefined && !previous.includes("${") && OPTION_WORD.test(unquoted(previous)) ? unquoted(previous) : null;
    return {
      beginsWord,
      firstWord: beginsWord && this.words.length === 0 && !this.redirect && !this.redirectWord,
      afterDoubleDash: this.words.some((word) => unquoted(word) === "--"),
      afterOption: option,
      afterRedirect: beginsWord && (this.redirect || this.redirectWord),
    };
  }
}

/** The script with every placeholder rewritten; throws UnbalancedScriptError for a quote, backtick or $( left open. */
export function rewriteShellPlaceholders(script: string, rewrite: PlaceholderRewrite): string {
  const stack: Frame[] = [{ kind: "top" }];
  const commands: Command[] = [new Command()];
  const command = (): Command => commands[commands.length - 1]!;
  let out = "";
  let i = 0;
  while (i < script.length) {
    const frame = stack[stack.length - 1] ?? { kind: "top" };
    const char = script[i] ?? "";
    const next = script[i + 1] ?? "";
    if (char === "$" && next === "{") {
      const replaced = rewrite(i, frame.kind === "double" ? "double" : "unquoted", script.length, command().place());
      if (replaced !== undefined) {
        command().add("${}");
        out += replaced.text;
        i = replaced.end;
      } else {
        command().add("${");
        out += "${";
        i += 2;
      }
      continue;
    }
    if (char === "\\") {
      command().add(char + next);
      out += char + next;
      i += 2;
      continue;
    }
    if (char === "$" && next === "(") {
      command().add("$(");
      stack.push({ kind: "subshell", depth: 0 });
      commands.push(new Command());
      out += "$(";
      i += 2;
      continue;
    }
    if (char === "`") {
      if (frame.kind === "backtick") {
        stack.pop();
        commands.pop();
      } else {
        command().add("`");
        stack.push({ kind: "backtick" });
        commands.push(new Command());
      }
    } else if (frame.kind === "double") {
      command().add(char);
      if (char === '"') stack.pop();
    } else if (char === '"') {
      command().add(char);
      stack.push({ kind: "double" });
    } else if (char === "'") {
      const close = script.indexOf("'", i + 1);
      if (close === -1) throw new UnbalancedScriptError("unterminated single quote in the script");
      out += rewriteSingleQuoted(script, i, close + 1, rewrite, command());
      i = close + 1;
      continue;
    } else if (frame.kind === "subshell" && char === "(") {
      frame.depth += 1;
      command().endCommand();
    } else if (frame.kind === "subshell" && char === ")") {
      if (frame.depth === 0) {
        stack.pop();
        commands.pop();
      } else {
        frame.depth -= 1;
        command().endCommand();
      }
    } else if (char === " " || char === "\t") {
      command().endWord();
    } else if (char === "\n" || char === ";" || char === "&" || char === "|" || char === "(" || char === ")") {
      command().endCommand();
    } else if (char === "<" || char === ">") {
      command().redirection();
      // `2>&1`, `<&3`: a descriptor, not a command after `&`.
      if (next === "&") {
        out += char + next;
        i += 2;
        continue;
      }
    } else {
      command().add(char);
    }
    out += char;
    i += 1;
  }
  if (stack.length !== 1) throw new UnbalancedScriptError("the script has an unterminated quote, backtick or $( … ); close it");
  return out;
}

/** Inside '…' nothing expands: each rewritten placeholder's text must close and reopen the quotes itself. */
function rewriteSingleQuoted(script: string, from: number, to: number, rewrite: PlaceholderRewrite, command: Command): string {
  let out = "";
  // What has been copied out, and what the current word has taken in (the quotes included).
  let cursor = from;
  let seen = from;
  let start = script.indexOf("${", cursor);
  while (start !== -1 && start < to) {
    command.add(script.slice(seen, start));
    seen = start;
    const replaced = rewrite(start, "single", to - 1, command.place());
    if (replaced === undefined) {
      start = script.indexOf("${", start + 2);
      continue;
    }
    command.add("${}");
    seen = replaced.end;
    out += script.slice(cursor, start) + replaced.text;
    cursor = replaced.end;
    start = script.indexOf("${", cursor);
  }
  command.add(script.slice(seen, to));
  return out + script.slice(cursor, to);
}
