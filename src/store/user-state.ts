// The user's own state folder: `$XDG_STATE_HOME/delta` when that is an absolute path (the XDG rule), else `~/.local/state/delta`; outside every workspace, and hidden from every box.
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

export function userStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME;
  return state !== undefined && isAbsolute(state) ? join(state, "delta") : join(homedir(), ".local", "state", "delta");
}
