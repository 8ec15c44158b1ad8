// The one error type of delta-sessions: a message for stderr and exit code 1.
import { DeltaError, EXIT, keepClassNames } from "../errors.js";

/** A sessions command could not do what was asked (bad id, ended session, bad flag, I/O failure). */
export class SessionError extends DeltaError {
  readonly type = "SESSION_ERROR";
  readonly exitCode = EXIT.FAILED;
}

keepClassNames({ SessionError });
