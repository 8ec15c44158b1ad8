// The environment a child process of the engine starts with.

/** The variables of `env` that have a value, as the plain record the runner takes. */
export function plainEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const plain: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined) plain[name] = value;
  }
  return plain;
}
