// The environment of a boxed process: only what a tool needs to run, not the engine's whole environment.

/** Kept by name: the search path, home, terminal and time zone, and the run variables the engine sets. */
const KEPT = new Set(["PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "DELTA_RUN_ID", "DELTA_AGENT_HOME", "DELTA_CWD"]);

/** The variables a proxied box reads its proxy from, curl's names and the upper-case ones other programs read. */
const PROXY_VARIABLES = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"];

/**
 * `env` filtered for a box: PATH, HOME, LANG, LC_*, TERM, TZ, the DELTA_* run variables, what
 * `passthrough` names (agent.yaml's env_passthrough), and — when `proxyUrl` is given — the proxy
 * variables pointing at it, with NO_PROXY cleared so every connection goes through it.
 */
export function sandboxEnvironment(env: Readonly<Record<string, string>>, passthrough: readonly string[], proxyUrl?: string): Record<string, string> {
  const named = new Set(passthrough);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (KEPT.has(name) || name.startsWith("LC_") || named.has(name)) kept[name] = value;
  }
  if (proxyUrl !== undefined) {
    for (const name of PROXY_VARIABLES) kept[name] = proxyUrl;
    delete kept.NO_PROXY;
    delete kept.no_proxy;
  }
  kept.DELTA_SANDBOX = "1";
  return kept;
}
