// Checks a model base URL as the user wrote it, before anything runs: only http:// and https:// URLs, with the fix in the refusal.
import { ConfigError } from "../errors.js";

/** Returns `value` when it is an http(s) URL; otherwise refuses (126) quoting the user's own text, where it came from, and the fix. */
export function checkBaseUrl(value: string, source: string): string {
  let protocol: string | null = null;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = null;
  }
  if (protocol === "http:" || protocol === "https:") return value;
  const shown = withoutCredentials(value);
  // "localhost:11434" parses as a URL whose scheme is "localhost:": the scheme was left out.
  const fix = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? "use an http:// or https:// URL, e.g. http://localhost:11434/v1" : `add the scheme: http://${shown}`;
  throw new ConfigError(`The model base URL ${JSON.stringify(shown)} (${source}) is not an http:// or https:// URL; ${fix}`);
}

/** A user:password@ part is not repeated in a message that may reach a log. */
function withoutCredentials(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@\s]*@/i, (_match, scheme: string | undefined) => `${scheme ?? ""}***@`);
}
