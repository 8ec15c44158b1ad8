// Typed errors and the one table that maps each to the exit code and RunResult error type.

export const EXIT = {
  COMPLETED: 0,
  FAILED: 1,
  WAITING_FOR_INPUT: 101,
  /** The run stopped to wait for something outside it that has a time (a limit's reset, a budget); `continue --due` goes on. */
  DEFERRED: 75,
  REFUSED: 126,
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** `delta verify`'s exit codes, by what it found of a journal's hash chain (a refusal is still 126). */
export const CHAIN_EXIT = {
  intact: 0,
  broken: 1,
  /** No line carries a hash: an engine before the chain wrote it all; nothing to verify, and nothing found broken. */
  unchained: 2,
} as const;

/** Base of every error the engine reports on purpose; anything else is a bug. */
export abstract class DeltaError extends Error {
  abstract readonly type: string;
  abstract readonly exitCode: ExitCode;
  /** The agent the refused or failed invocation was for, once its package loaded: the RunResult names it. */
  agentName: string | null = null;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An agent package (agent.yaml, imports, hooks.yaml, context.yaml, prompt) is invalid. */
export class ConfigError extends DeltaError {
  readonly type = "CONFIG_ERROR";
  readonly exitCode = EXIT.REFUSED;
}

/** A command line is wrong: unknown flag, missing value, bad number. */
export class UsageError extends DeltaError {
  readonly type = "USAGE_ERROR";
  readonly exitCode = EXIT.REFUSED;
}

/** A run cannot be started or continued: bad or duplicate id, unknown run, live holder, wrong state. */
export class RunRefusedError extends DeltaError {
  readonly type = "RUN_REFUSED";
  readonly exitCode = EXIT.REFUSED;
}

/** `continue` would send the run to another model endpoint than the one it was started with: refused unless accepted on purpose. */
export class EndpointChangedError extends DeltaError {
  readonly type = "ENDPOINT_CHANGED";
  readonly exitCode = EXIT.REFUSED;
}

/** A base URL from the workspace's `.env` (a file the run's tools can write) would receive a key that file did not give. */
export class UntrustedEndpointError extends DeltaError {
  readonly type = "UNTRUSTED_ENDPOINT";
  readonly exitCode = EXIT.REFUSED;
}

/** A run's folder, journal or the agent's hooks file belongs to another user, who is not trusted: refused before anything ran. */
export class UntrustedOwnerError extends DeltaError {
  readonly type = "UNTRUSTED_OWNER";
  readonly exitCode = EXIT.REFUSED;
}

/** A run file is not a regular file (a FIFO, device, socket, folder or symlink), or is larger than its bound. */
export class RunFileError extends DeltaError {
  readonly type = "RUN_FILE_REFUSED";
  readonly exitCode = EXIT.REFUSED;
}

/**
 * A file the engine reads from a workspace or an agent's folder is one it may not read: a link out of the
 * folder it is named in or to a secret, not a regular file, or past its bound. Refused before a run (126); a
 * run that meets one mid-way fails with this type, resumable once the file is fixed.
 */
export class FileRefusedError extends DeltaError {
  readonly type = "FILE_REFUSED";
  readonly exitCode = EXIT.REFUSED;
  /** What is wrong and the fix, without the file's path: for a caller that names the file its own way. */
  readonly problem: string;
  constructor(message: string, options: { cause?: unknown; problem?: string } = {}) {
    super(message, options);
    this.problem = options.problem ?? message;
  }
}

/** An MCP server the agent names could not be started, listed or offered: refused before the run begins. */
export class McpServerError extends DeltaError {
  readonly type = "MCP_SERVER_ERROR";
  readonly exitCode = EXIT.REFUSED;
}

/** The agent asks for a sandbox this machine cannot give (no bwrap, user namespaces denied, not Linux): refused, never run unboxed. */
export class SandboxUnavailableError extends DeltaError {
  readonly type = "SANDBOX_UNAVAILABLE";
  readonly exitCode = EXIT.REFUSED;
}

/** A budget ledger (`--budget-file`) cannot be used: missing, not one the engine made, damaged, or where a boxed tool could write it. */
export class BudgetLedgerError extends DeltaError {
  readonly type = "BUDGET_LEDGER_ERROR";
  readonly exitCode = EXIT.REFUSED;
}

/** SIGINT or SIGTERM arrived before a run began (while its MCP servers were starting): nothing was recorded. */
export class InterruptedError extends DeltaError {
  readonly type = "INTERRUPTED";
  readonly exitCode = EXIT.INTERRUPTED;
}

/** No API key or endpoint could be found for the provider. */
export class MissingApiKeyError extends DeltaError {
  readonly type = "MISSING_API_KEY";
  readonly exitCode = EXIT.REFUSED;
}

/** The model endpoint failed after retries, or answered with something unusable. */
export class LlmError extends DeltaError {
  readonly type = "LLM_ERROR";
  readonly exitCode = EXIT.FAILED;
}

/** What a context-length refusal says of sizes, in tokens: the window and the request's size, when the server named them. */
export interface ContextOverflow {
  /** The window, when the server named it. */
  limitTokens?: number;
  /** What the request needed, when the server said. */
  requestedTokens?: number;
}

/**
 * The conversation no longer fits the model's context window: the server said so, in any of the
 * phrasings llm/context-overflow.ts knows. Exit 1, resumable once the context is made smaller.
 */
export class ContextOverflowError extends DeltaError {
  readonly type = "CONTEXT_OVERFLOW";
  readonly exitCode = EXIT.FAILED;
  constructor(
    message: string,
    readonly sizes: ContextOverflow = {},
  ) {
    super(message);
  }
}

/** The provider's content filter refused the request, or the model refused to answer: exit 1, continue with a rephrased task. */
export const MODEL_REFUSED = "MODEL_REFUSED";
export class ModelRefusedError extends DeltaError {
  readonly type = MODEL_REFUSED;
  readonly exitCode = EXIT.FAILED;
}

/**
 * The final answer did not meet the run's output schema, even after the engine asked once more:
 * exit 1, resumable (`continue` without -m asks once more).
 */
export const OUTPUT_INVALID = "OUTPUT_INVALID";

/** The run used up --max-iterations before the model finished: exit 1, resumable (each continue allows as many more). */
export const MAX_ITERATIONS = "MAX_ITERATIONS";

/** A final reply a token limit cut off: never COMPLETED (CONTRACT §4); exit 1, resumable once llm.max_tokens is raised. */
export const MODEL_TRUNCATED = "MODEL_TRUNCATED";

/**
 * A final reply the server paused half-way (Anthropic's `stop_reason: "pause_turn"`, which only its
 * own server tools cause): its text is not an answer, so never COMPLETED; exit 1, resumable.
 */
export const MODEL_PAUSED = "MODEL_PAUSED";

/** A run whose holder died before recording its end, found by the process that took it over: the ERROR event that says so. */
export const ORPHANED_RUN = "ORPHANED_RUN";

/** A journal file cannot be read as a valid sequence of events. */
export class JournalError extends DeltaError {
  readonly type = "JOURNAL_ERROR";
  readonly exitCode = EXIT.FAILED;
}

/** A recorded conversation ran out or no longer fits the agent. */
export class ReplayError extends DeltaError {
  readonly type = "REPLAY_ERROR";
  readonly exitCode = EXIT.FAILED;
}

/** `--replay-strict`: a request is not the one the recording sent at that call, so its recorded reply does not answer it; nothing was sent to a model. */
export class ReplayDivergedError extends DeltaError {
  readonly type = "REPLAY_DIVERGED";
  readonly exitCode = EXIT.FAILED;
}

/** A hook refused a model request (pre_llm_request blocked). */
export class HookBlockedError extends DeltaError {
  readonly type = "HOOK_BLOCKED";
  readonly exitCode = EXIT.FAILED;
}

/** The workspace cannot be written (read-only mount, no permission): refused before anything ran. See fs-errors.ts. */
export class WorkspaceError extends DeltaError {
  readonly type = "WORKSPACE_ERROR";
  readonly exitCode = EXIT.REFUSED;
}

/** The disk (or the user's quota) is full: exit 1, resumable once there is room. */
export class DiskFullError extends DeltaError {
  readonly type = "DISK_FULL";
  readonly exitCode = EXIT.FAILED;
}

/** The storage device failed (EIO, a stale network file handle): exit 1, resumable once it is fixed. */
export class StorageIoError extends DeltaError {
  readonly type = "IO_ERROR";
  readonly exitCode = EXIT.FAILED;
}

/** Another process took the run over: this one stops at once, writes nothing more, and exits 1. */
export const OWNERSHIP_LOST = "OWNERSHIP_LOST";
export class OwnershipLostError extends DeltaError {
  readonly type = OWNERSHIP_LOST;
  readonly exitCode = EXIT.FAILED;
  static of(runId: string, reason: string): OwnershipLostError {
    return new OwnershipLostError(`This process no longer owns run ${runId}: ${reason}. It stopped without writing anything more.`);
  }
}

/** The engine itself failed at run time, for a reason no narrower type names. */
export const ENGINE_ERROR = "ENGINE_ERROR";
export class EngineError extends DeltaError {
  readonly type = ENGINE_ERROR;
  readonly exitCode = EXIT.FAILED;
}

/**
 * Why a run stopped to wait, one row per reason: what it waits for, and what makes it due. The RunResult's
 * `deferred.reason`, ENGINE_END's and metadata.json's are these names; a new cause of waiting adds its row here.
 */
export const DEFERRAL_REASONS = {
  /** A 429/503/529 whose wait is longer than llm.max_retry_wait_ms, or that outlasted llm.max_retries. */
  RATE_LIMITED: "the provider's rate limit or overload: due when it resets (resume_after, from Retry-After or the reset headers)",
  /** The account is out of credit or over its spend limit: due when the provider says access returns, else unknown. */
  QUOTA_EXHAUSTED: "the provider account's quota, credit or spend limit is used up: due when access returns (unknown unless the provider said)",
  /** The run's budget or the fleet's ledger has no room for the next model call's worst case: due once it is raised. */
  BUDGET_EXHAUSTED: "a budget (the run's llm.budget or --max-cost-usd, or a --budget-file ledger) has no room for the next model call: raise it, then continue",
  /** The run's model call was queued for the provider's batch API (llm.batch, --batch): due at once, a continue collects it when its batch has ended. */
  MODEL_BATCHED: "the next model call waits in the provider's batch API: `delta batch submit` sends it, `continue --due` collects it once its batch has ended",
} as const;
export type DeferralReason = keyof typeof DEFERRAL_REASONS;
export const DEFERRAL_REASON_NAMES = Object.keys(DEFERRAL_REASONS) as [DeferralReason, ...DeferralReason[]];

/** What a deferred run waits for: the reason, when it may go on (ISO-8601 UTC, or null when unknown), and why in words. */
export interface Deferral {
  reason: DeferralReason;
  resumeAfter: string | null;
  message: string;
}

/**
 * The run must wait for something outside it (a limit's reset, a budget): it ends DEFERRED (exit 75) with nothing lost,
 * and `delta continue` (or `continue --due` once its time has come) goes on from where it stopped.
 */
export class DeferredError extends DeltaError {
  readonly type = "DEFERRED";
  readonly exitCode = EXIT.DEFERRED;
  constructor(readonly deferral: Deferral) {
    super(deferral.message);
  }
}

/**
 * Gives each class the name it is written with. The bundle's identifiers are minified (scripts/bundle.mjs), which renames
 * classes, and an error's name is its class's (DeltaError's constructor): without this a stack would say `xe: …`.
 */
export function keepClassNames(classes: Record<string, abstract new (...args: never[]) => unknown>): void {
  for (const [name, errorClass] of Object.entries(classes)) Object.defineProperty(errorClass, "name", { value: name, configurable: false });
}

keepClassNames({ DeltaError, ConfigError, UsageError, RunRefusedError, EndpointChangedError, UntrustedEndpointError, UntrustedOwnerError, RunFileError, FileRefusedError, McpServerError, SandboxUnavailableError, BudgetLedgerError, InterruptedError, MissingApiKeyError, LlmError, ContextOverflowError, ModelRefusedError, JournalError, ReplayError, ReplayDivergedError, HookBlockedError, WorkspaceError, DiskFullError, StorageIoError, OwnershipLostError, EngineError, DeferredError });

/** Runs `work` for the agent `agentName`; a DeltaError it throws carries the agent's name out. */
export async function forAgent<T>(agentName: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof DeltaError && err.agentName === null) err.agentName = agentName;
    throw err;
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
