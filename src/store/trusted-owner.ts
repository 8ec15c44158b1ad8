// Refuses a run's folder, journal or the agent's hooks file when another user owns it, as git refuses a repository it does not own (safe.directory).
import { lstatSync, readFileSync } from "node:fs";
import { UntrustedOwnerError } from "../errors.js";

/** Users whose files are trusted all the same: names or uids, separated by commas or spaces; `*` trusts everyone. */
const TRUSTED_OWNERS_VARIABLE = "DELTA_TRUSTED_OWNERS";

/**
 * Refuses (126) `path` when it belongs to a user who is neither the caller nor root nor named in
 * DELTA_TRUSTED_OWNERS: such a user could change what the run does next (its hooks, its journal)
 * and have it done as the caller. A missing file is not this check's business.
 */
export function checkTrustedOwner(path: string, what: string, env: NodeJS.ProcessEnv = process.env): void {
  const caller = process.getuid?.();
  if (caller === undefined) return;
  let owner: number;
  try {
    owner = lstatSync(path).uid;
  } catch {
    return;
  }
  if (owner === caller || owner === 0) return;
  const names = userNames();
  const trusted = (env[TRUSTED_OWNERS_VARIABLE] ?? "").split(/[\s,]+/).filter((entry) => entry !== "");
  const ownerName = names.get(owner);
  if (trusted.some((entry) => entry === "*" || entry === String(owner) || (ownerName !== undefined && entry === ownerName))) return;
  const shown = ownerName === undefined ? `uid ${owner}` : `${ownerName} (uid ${owner})`;
  const callerName = names.get(caller);
  throw new UntrustedOwnerError(
    `${path} (${what}) belongs to ${shown}, not to you (${callerName ?? `uid ${caller}`}) or root. ` +
      "A run's files and the agent's hooks decide what runs as you, so delta does not use them when another user can change them. " +
      `If you trust that user, set ${TRUSTED_OWNERS_VARIABLE}=${ownerName ?? owner} (names or uids, comma-separated; * trusts every user).`,
  );
}

/** uid → user name from /etc/passwd; empty when it cannot be read (uids are shown instead). */
function userNames(): Map<number, string> {
  const names = new Map<number, string>();
  let text: string;
  try {
    text = readFileSync("/etc/passwd", "utf8");
  } catch {
    return names;
  }
  for (const line of text.split("\n")) {
    const [name, , uid] = line.split(":");
    if (name && uid && /^\d+$/.test(uid) && !names.has(Number(uid))) names.set(Number(uid), name);
  }
  return names;
}
