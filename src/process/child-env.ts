// The environment a child process of the engine starts with: the engine's own, minus the model provider's variables and the OTLP exporter's credentials.
import { urlCredentials } from "../secrets.js";

/** Variables that hold a model provider's key. */
export const PROVIDER_KEY_VARIABLES = ["DELTA_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"] as const;

/** Variables that name a model provider's endpoint (and may carry credentials in it). */
export const PROVIDER_URL_VARIABLES = ["DELTA_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"] as const;

/** An OTLP exporter's headers, for every signal (OTEL_EXPORTER_OTLP_HEADERS, …_TRACES_HEADERS): often a collector's API key. */
const OTLP_HEADERS = /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS$/;
/** An OTLP exporter's endpoint, for every signal: a user:password@ in it is a credential. */
const OTLP_ENDPOINT = /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?ENDPOINT$/;

/** The credentials an OTLP exporter variable holds (every header value, or a user:password@ in an endpoint); none for any other variable. */
export function otlpCredentials(name: string, value: string): string[] {
  if (OTLP_HEADERS.test(name)) return [value];
  if (OTLP_ENDPOINT.test(name)) return urlCredentials(value.trim());
  return [];
}

/**
 * A child never gets these unless the agent passes them on (env_passthrough): a tool that could
 * read the endpoint could report it, and one whose own `delta` inherited it (or the engine's model
 * and protocol) would call it unasked.
 */
const PROVIDER_VARIABLES: readonly string[] = [...PROVIDER_KEY_VARIABLES, ...PROVIDER_URL_VARIABLES, "DELTA_PROVIDER", "DELTA_MODEL"];

/** Shorter keys ("x", "ollama" for a local server) are removed only by name: matching them by value would take unrelated variables. */
const MIN_SECRET_VALUE_LENGTH = 8;

interface SecretPolicy {
  /** Values removed whatever the variable holding them is called: the key the provider uses. */
  secretValues?: readonly string[];
  /** Variables passed on all the same (agent.yaml's env_passthrough). */
  passthrough?: readonly string[];
  /** Values for passed-on variables as the engine resolved them (a key read from a .env file), over the environment's. */
  resolved?: Readonly<Record<string, string>>;
}

/**
 * `parent` without the provider's variables (keys, base URLs, DELTA_PROVIDER, DELTA_MODEL), without an OTLP exporter's
 * headers or an OTLP endpoint that carries a user:password@ (one without credentials stays: a `delta` a tool starts
 * joins the trace), and without any variable whose value is one of `secretValues` (8 characters or more); a variable
 * named in `passthrough` is kept, with its resolved value when there is one.
 */
export function childEnvironment(parent: NodeJS.ProcessEnv, policy: SecretPolicy = {}): Record<string, string> {
  const passthrough = new Set(policy.passthrough ?? []);
  const secretValues = new Set((policy.secretValues ?? []).filter((value) => value.length >= MIN_SECRET_VALUE_LENGTH));
  const names = new Set<string>(PROVIDER_VARIABLES);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (!passthrough.has(name) && (names.has(name) || secretValues.has(value) || otlpCredentials(name, value).length > 0)) continue;
    env[name] = value;
  }
  for (const name of passthrough) {
    const value = policy.resolved?.[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
