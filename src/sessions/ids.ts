// Session ids: made from random bytes, and checked before one is ever used as a path.
import { randomBytes } from "node:crypto";
import { SessionError } from "./errors.js";
import { SESSION_ID_PATTERN } from "./schema.js";

export type SessionId = string & { readonly __brand: "SessionId" };

export function newSessionId(): SessionId {
  return `sess_${randomBytes(6).toString("hex")}` as SessionId;
}

/** Ids come from the model, so anything but `sess_` + 12 hex digits is refused (no path traversal). */
export function parseSessionId(raw: string): SessionId {
  if (!SESSION_ID_PATTERN.test(raw)) {
    throw new SessionError(
      `invalid session id ${JSON.stringify(raw)}: expected "sess_" followed by 12 lowercase hex digits, as printed by \`delta-sessions start\``,
    );
  }
  return raw as SessionId;
}
