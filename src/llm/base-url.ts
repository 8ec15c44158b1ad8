// A model base URL: each protocol's default, the check of one the user wrote (only http:// and https://, with the fix in the refusal), and its printable form.
import { ConfigError } from "../errors.js";
import { withoutUrlCredentials } from "../secrets.js";
import type { ProviderName } from "./types.js";

/** Where each protocol sends requests when no base URL is set. */
export const DEFAULT_BASE_URLS: Record<ProviderName, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  "openai-responses": "https://api.openai.com/v1",
};

/** Returns `value` when it is an http(s) URL; otherwise refuses (126) quoting the user's own text, where it came from, and the fix. */
export function checkBaseUrl(value: string, source: string): string {
  let protocol: string | null = null;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = null;
  }
  if (protocol === "http:" || protocol === "https:") return value;
  const shown = withoutUrlCredentials(value);
  // "localhost:11434" parses as a URL whose scheme is "localhost:": the scheme was left out.
  const fix = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? "use an http:// or https:// URL, e.g. http://localhost:11434/v1" : `add the scheme: http://${shown}`;
  throw new ConfigError(`The model base URL ${JSON.stringify(shown)} (${source}) is not an http:// or https:// URL; ${fix}`);
}

/** The base URL without credentials, query or fragment, safe to print and to journal: the endpoint a run talks to. */
export function endpointUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}
