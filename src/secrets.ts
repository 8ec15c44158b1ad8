// Removes secrets from text and JSON: known secret strings anywhere, and values under secret-looking keys.
//
// Every output is redacted at exactly one point, where it is written:
//   journal.jsonl        journal/writer.ts   (each appended event; the writer cannot be opened without RunSecrets)
//   metadata.json        store/run-metadata.ts  writeMetadata
//   io/ records          store/io-log.ts     writeRecord (model calls, tool executions, hook runs)
//   engine.log           store/io-log.ts     createEngineLogger
//   stderr progress      run/stint.ts        the stint's progress function
//   stdout RunResult     run/stint.ts        finish → redactOutcome
//   stdout stream-json   the journal's lines as the writer wrote them (already redacted there), from the run files' subscription
//   MCP server refusals and -v lines before a run   run/mcp-start.ts
// The run's files are written through store/run-files.ts, which holds the run's RunSecrets and passes them to each writer above.
// Sources (providers, hooks, tools) pass text on as it came; they never redact.
// A run's secret strings: the API key (llm/provider-choice.ts), the values its MCP servers' headers and
// env read from the environment, and the OTLP exporter's headers and endpoint credentials (run/engine-start.ts, setupSecrets).
// Spans sent live remove them again (trace/span-fold.ts); spans exported later come from the redacted journal.
export const REDACTED = "[REDACTED]";

declare const runSecretsBrand: unique symbol;

/**
 * A run's secret strings as one value that only this file makes: a journal writer takes this type,
 * so opening one without the run's secrets does not compile (journal/writer.ts).
 */
export type RunSecrets = readonly string[] & { readonly [runSecretsBrand]: true };

/** The run's secrets, gathered where they are known (run/engine-start.ts setupSecrets); an empty list for a process that has none. */
export function runSecrets(values: readonly string[]): RunSecrets {
  return Object.freeze([...values]) as readonly string[] as RunSecrets;
}

const SENSITIVE_KEYS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "api-key", "x-api-key"]);
const SENSITIVE_WORDS = new Set(["secret", "secrets", "password", "passwd", "passphrase", "apikey", "credential", "credentials"]);

/** Shorter strings are not treated as secrets: replacing "x" or "ollama" everywhere would corrupt what is written, not protect it. */
export const MIN_SECRET_LENGTH = 8;

interface RedactOptions {
  /** Also hide the values of secret-named fields and redact field names (default). Off: only string values change. */
  fields?: boolean;
}

/** Deep copy of a JSON-like value with every known secret string and every secret-named field's value replaced by [REDACTED]. */
export function redactSecrets(value: unknown, secrets: readonly string[], options: RedactOptions = {}): unknown {
  const known = usableSecrets(secrets);
  const fields = options.fields ?? true;
  const seen = new WeakSet<object>();
  const visit = (current: unknown): unknown => {
    if (typeof current === "string") return replaceKnown(current, known);
    if (typeof current !== "object" || current === null) return current;
    if (seen.has(current)) return "[Circular]";
    seen.add(current);
    const copy = Array.isArray(current)
      ? current.map(visit)
      : Object.fromEntries(
          Object.entries(current).map(([key, field]) => (fields ? [replaceKnown(key, known), hidesValue(key, field) ? REDACTED : visit(field)] : [key, visit(field)])),
        );
    seen.delete(current);
    return copy;
  };
  return visit(value);
}

/**
 * `JSON.stringify(redactSecrets(value, secrets), null, space)`, written in one pass with a
 * replacer instead of through a redacted deep copy (records are written every iteration). The
 * replacer cannot rename keys, so when a secret shows up in the text anyway (inside a key), or
 * could hide from that check (a secret JSON would escape), the copying path writes the text.
 */
export function redactedJson(value: unknown, secrets: readonly string[], space?: number): string {
  const known = usableSecrets(secrets);
  const viaCopy = (): string => JSON.stringify(redactSecrets(value, known), null, space);
  if (known.some((secret) => JSON.stringify(secret) !== `"${secret}"`)) return viaCopy();
  let text: string;
  try {
    text = JSON.stringify(
      value,
      function (this: unknown, key: string, field: unknown): unknown {
        if (key !== "" && !Array.isArray(this) && hidesValue(key, field)) return REDACTED;
        return typeof field === "string" ? replaceKnown(field, known) : field;
      },
      space,
    );
  } catch {
    // A cycle: the copying path writes it as "[Circular]".
    return viaCopy();
  }
  return known.some((secret) => text.includes(secret)) ? viaCopy() : text;
}

/** A secret-named field's value is hidden unless it is an object, such as a tool's JSON schema for a `password` parameter. */
function hidesValue(key: string, value: unknown): boolean {
  const isPlainObject = typeof value === "object" && value !== null && !Array.isArray(value);
  return !isPlainObject && isSensitiveKey(key);
}

/** The text with every occurrence of a known secret replaced by [REDACTED]. */
export function redactText(text: string, secrets: readonly string[]): string {
  return replaceKnown(text, usableSecrets(secrets));
}

/**
 * True for header-like and credential-like names (authorization, x-api-key, client_secret,
 * access_token, dbPassword) but not for counters such as max_tokens or input_tokens.
 */
export function isSensitiveKey(key: string): boolean {
  let known = sensitiveKeyCache.get(key);
  if (known === undefined) {
    if (sensitiveKeyCache.size >= SENSITIVE_KEY_CACHE_LIMIT) sensitiveKeyCache.clear();
    known = classifyKey(key);
    sensitiveKeyCache.set(key, known);
  }
  return known;
}

/** Records repeat the same few keys (role, content, tool_calls…) every iteration, so the verdicts are kept. */
const sensitiveKeyCache = new Map<string, boolean>();
const SENSITIVE_KEY_CACHE_LIMIT = 10_000;

function classifyKey(key: string): boolean {
  const lower = key.toLowerCase();
  if (SENSITIVE_KEYS.has(lower)) return true;
  const words = splitWords(key);
  if (words.some((word) => SENSITIVE_WORDS.has(word))) return true;
  const joined = words.join("_");
  if (joined.includes("api_key") || joined.includes("private_key") || joined.includes("access_key")) return true;
  // A singular trailing "token" names a credential (access_token, authToken); plural "tokens" counts them.
  return words.at(-1) === "token";
}

function splitWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/** The secrets worth replacing, longest first so a secret that contains another is replaced whole. */
export function usableSecrets(secrets: readonly string[]): readonly string[] {
  // A run's secrets are a frozen list (runSecrets), redacted with many times a turn: sorted once. Any other list is sorted each time.
  if (!Object.isFrozen(secrets)) return sortedUsable(secrets);
  let usable = usableOfFrozen.get(secrets);
  if (usable === undefined) {
    usable = Object.freeze(sortedUsable(secrets));
    usableOfFrozen.set(secrets, usable);
  }
  return usable;
}

const usableOfFrozen = new WeakMap<readonly string[], readonly string[]>();

function sortedUsable(secrets: readonly string[]): string[] {
  return [...new Set(secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
}

function replaceKnown(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  }
  return result;
}

/** The user:password@ part of a URL (a base URL, a proxy, a collector), and the password alone: strings to keep out of everything written. */
export function urlCredentials(value: string): string[] {
  // A proxy may be written without its scheme, as curl allows.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return [];
  }
  if (url.username === "" && url.password === "") return [];
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/@\s]*)@/i.exec(withScheme)?.[1];
  return [userinfo, url.password, safeDecode(url.password)].filter((part): part is string => part !== undefined && part !== "");
}

/** A URL as a message may show it: a user:password@ part becomes ***@. */
export function withoutUrlCredentials(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@\s]*@/i, (_match, scheme: string | undefined) => `${scheme ?? ""}***@`);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
