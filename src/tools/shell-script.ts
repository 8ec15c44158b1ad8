// Walks a sh script's quoting (top level, "…", '…', `…`, $( … )) so `${…}` placeholders can be rewritten for the quotes they sit in.

/** Where a placeholder sits: outside quotes (in `…` and $( … ) too), inside "…", or inside '…'. */
export type Quoting = "unquoted" | "double" | "single";

/**
 * Called with the index of each `${`, the quoting around it and the index its `}` must come before
 * (the closing quote of '…'); returns the text to put in its place and the index just past what it
 * replaces, or undefined to keep the `${` as written.
 */
type PlaceholderRewrite = (start: number, quoting: Quoting, limit: number) => { text: string; end: number } | undefined;

export class UnbalancedScriptError extends Error {}

type Frame = { kind: "top" | "double" | "backtick" } | { kind: "subshell"; depth: number };

/** The script with every placeholder rewritten; throws UnbalancedScriptError for a quote, backtick or $( left open. */
export function rewriteShellPlaceholders(script: string, rewrite: PlaceholderRewrite): string {
  const stack: Frame[] = [{ kind: "top" }];
  let out = "";
  let i = 0;
  while (i < script.length) {
    const frame = stack[stack.length - 1] ?? { kind: "top" };
    const char = script[i] ?? "";
    const next = script[i + 1] ?? "";
    if (char === "$" && next === "{") {
      const replaced = rewrite(i, frame.kind === "double" ? "double" : "unquoted", script.length);
      if (replaced !== undefined) {
        out += replaced.text;
        i = replaced.end;
      } else {
        out += "${";
        i += 2;
      }
      continue;
    }
    if (char === "\\") {
      out += char + next;
      i += 2;
      continue;
    }
    if (char === "$" && next === "(") {
      stack.push({ kind: "subshell", depth: 0 });
      out += "$(";
      i += 2;
      continue;
    }
    if (char === "`") {
      if (frame.kind === "backtick") stack.pop();
      else stack.push({ kind: "backtick" });
    } else if (frame.kind === "double") {
      if (char === '"') stack.pop();
    } else if (char === '"') {
      stack.push({ kind: "double" });
    } else if (char === "'") {
      const close = script.indexOf("'", i + 1);
      if (close === -1) throw new UnbalancedScriptError("unterminated single quote in the script");
      out += rewriteSingleQuoted(script, i, close + 1, rewrite);
      i = close + 1;
      continue;
    } else if (frame.kind === "subshell" && char === "(") {
      frame.depth += 1;
    } else if (frame.kind === "subshell" && char === ")") {
      if (frame.depth === 0) stack.pop();
      else frame.depth -= 1;
    }
    out += char;
    i += 1;
  }
  if (stack.length !== 1) throw new UnbalancedScriptError("the script has an unterminated quote, backtick or $( … ); close it");
  return out;
}

/** Inside '…' nothing expands: each rewritten placeholder's text must close and reopen the quotes itself. */
function rewriteSingleQuoted(script: string, from: number, to: number, rewrite: PlaceholderRewrite): string {
  let out = "";
  let cursor = from;
  let start = script.indexOf("${", cursor);
  while (start !== -1 && start < to) {
    const replaced = rewrite(start, "single", to - 1);
    if (replaced === undefined) {
      start = script.indexOf("${", start + 2);
      continue;
    }
    out += script.slice(cursor, start) + replaced.text;
    cursor = replaced.end;
    start = script.indexOf("${", cursor);
  }
  return out + script.slice(cursor, to);
}
