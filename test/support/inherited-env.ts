// The engine's environment as a child's base (no variable withheld): what a test gives the process runner's callers as the run would give its own.
export function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
