// Parses .env text line by line: KEY=value, `export ` prefix, quotes, comments; bad lines are reported, not fatal.
export interface DotenvWarning {
  line: number;
  message: string;
}

const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };

/**
 * Node's util.parseEnv is not used: it silently merges a line without `=` into the next key
 * and gives no line numbers, so a typo would become a wrong value with no warning.
 */
export function parseDotenv(text: string, warn: (warning: DotenvWarning) => void = () => {}): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const lineNumber = index + 1;
    const line = (lines[index] ?? "").trim();
    if (line === "" || line.startsWith("#")) continue;
    const body = line.replace(/^export\s+/, "");
    const equals = body.indexOf("=");
    if (equals <= 0) {
      warn({ line: lineNumber, message: "expected KEY=value" });
      continue;
    }
    const key = body.slice(0, equals).trim();
    if (!KEY.test(key)) {
      warn({ line: lineNumber, message: `${JSON.stringify(key)} is not a valid variable name` });
      continue;
    }
    const raw = body.slice(equals + 1).trimStart();
    const quote = raw[0];
    if (quote === '"' || quote === "'" || quote === "`") {
      const parsed = readQuoted(lines, index, raw, quote);
      if (!parsed) {
        warn({ line: lineNumber, message: `the ${quote} quote is never closed` });
        continue;
      }
      values[key] = parsed.value;
      index = parsed.lastIndex;
      continue;
    }
    // An unquoted value ends at a comment that follows whitespace.
    values[key] = raw.replace(/\s+#.*$/, "").trim();
  }
  return values;
}

/** Reads a quoted value, which for double quotes and backticks may run over several lines. */
function readQuoted(lines: string[], startIndex: number, raw: string, quote: string): { value: string; lastIndex: number } | null {
  let text = raw.slice(1);
  let index = startIndex;
  for (;;) {
    const close = findClosingQuote(text, quote);
    if (close >= 0) {
      const inner = text.slice(0, close);
      return { value: quote === '"' ? unescape(inner) : inner, lastIndex: index };
    }
    if (quote === "'" || index + 1 >= lines.length) return null;
    index += 1;
    text += `\n${lines[index] ?? ""}`;
  }
}

function findClosingQuote(text: string, quote: string): number {
  for (let i = 0; i < text.length; i += 1) {
    if (quote === '"' && text[i] === "\\") {
      i += 1;
      continue;
    }
    if (text[i] === quote) return i;
  }
  return -1;
}

function unescape(text: string): string {
  return text.replace(/\\(.)/g, (match, char: string) => ESCAPES[char] ?? match);
}
