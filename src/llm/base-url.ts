// A model base URL: each protocol's default, the check of one the user wrote (only http:// and https://, with the fix in the refusal), and its printable form.
import { ConfigError } from "../errors.js";
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
  const shown = withoutCredentials(value);
  // "localhost:11434" parses as a URL whose scheme is "localhost:": the scheme was left out.
  const fix = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? "use an http:// or https:// URL, e.g. http://localhost:11434/v1" : `add the scheme: http://${shown}`;
  throw new ConfigError(`The model base URL ${JSON.stringify(shown)} (${source}) is not an http:// or https:// URL; ${fix}`);
}

/** A user:password@ part is not repeated in a message that may reach a log. */
function withoutCredentials(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@\s]*@/i, (_match, scheme: string | undefined) => `${scheme ?? ""}***@`);
}

/** The base URL without credentials, query or fragment, safe to print and to journal: the endpoint a run talks to. */
export function endpointUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}

/** The user:password@ part of a base or proxy URL, and the password alone: strings to keep out of everything written. */
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

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
