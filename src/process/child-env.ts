// The environment a child process of the engine starts with: the engine's own, minus the variables its caller names and any holding one of its secrets.

/** Shorter keys ("x", "ollama" for a local server) are removed only by name: matching them by value would take unrelated variables. */
const MIN_SECRET_VALUE_LENGTH = 8;

interface SecretPolicy {
  /** Variables removed by name (the model provider's, the OTLP exporter's credentials): the caller knows which; this room knows no provider. */
  withheld: readonly string[];
  /** Values removed whatever the variable holding them is called: the key the provider uses. */
  secretValues?: readonly string[];
  /** Variables passed on all the same (agent.yaml's env_passthrough). */
  passthrough?: readonly string[];
  /** Values for passed-on variables as the engine resolved them (a key read from a .env file), over the environment's. */
  resolved?: Readonly<Record<string, string>>;
}

/**
 * `parent` without the variables `withheld` names and without any variable whose value is one of `secretValues`
 * (8 characters or more); a variable named in `passthrough` is kept, with its resolved value when there is one.
 */
export function childEnvironment(parent: NodeJS.ProcessEnv, policy: SecretPolicy): Record<string, string> {
  const passthrough = new Set(policy.passthrough ?? []);
  const secretValues = new Set((policy.secretValues ?? []).filter((value) => value.length >= MIN_SECRET_VALUE_LENGTH));
  const names = new Set(policy.withheld);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (!passthrough.has(name) && (names.has(name) || secretValues.has(value))) continue;
    env[name] = value;
  }
  for (const name of passthrough) {
    const value = policy.resolved?.[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
