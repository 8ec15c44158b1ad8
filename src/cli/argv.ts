// cac's parser turns "007" into 7 and "-x" values into flags; this keeps option values exactly as typed.

const MARK = "\u0001";

/** Marks the value after each value-taking option so the parser treats it as an opaque string. */
export function protectValues(argv: readonly string[], valueOptions: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i]!;
    if (token === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const eq = token.indexOf("=");
    if (token.startsWith("--") && eq > 2 && valueOptions.has(token.slice(0, eq))) {
      out.push(`${token.slice(0, eq + 1)}${MARK}${token.slice(eq + 1)}`);
      continue;
    }
    out.push(token);
    if (valueOptions.has(token) && i + 1 < argv.length) {
      out.push(`${MARK}${argv[i + 1]!}`);
      i += 1;
    }
  }
  return out;
}

/** Removes the mark from a parsed value; values that were never marked come back unchanged. */
export function unprotect(value: unknown): unknown {
  if (typeof value === "string") return value.startsWith(MARK) ? value.slice(1) : value;
  if (Array.isArray(value)) return value.map(unprotect);
  return value;
}

export function unprotectAll(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).map(([key, value]) => [key, unprotect(value)]));
}
