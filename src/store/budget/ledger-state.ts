// A budget ledger's states: `states/<seq>.json`, each the whole ledger after its seq-th change, created exclusively — of two changes computed from one state only one is written, the other is computed again.
//
// This is the run lease's fencing generation applied to a shared account: the number of the next state is the token,
// and the file system's exclusive link (store/exclusive-file.ts) hands it to exactly one process on any host. No
// state is ever rewritten; a writer that stalled and comes back late finds its number taken and starts over from the
// newer state. Money is counted in whole nano-dollars, so sums are exact.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { BudgetLedgerError } from "../../errors.js";
import { readRunFile } from "../../safe-open.js";
import { createExclusive } from "../exclusive-file.js";

const LEDGER_VERSION = 1;
/** Past states kept beside the newest, for `budget show` and for a look back after the fact. */
const KEPT_STATES = 64;
/** No state of a ledger is this long (its reservations are one per model call in flight). */
const MAX_STATE_BYTES = 16 << 20;

const NanoUsd = z.number().int().nonnegative();

/** Room held for one model call in flight, until it is settled with the call's real cost or expires with its holder. */
const ReservationSchema = z.object({
  id: z.string().min(1),
  /** The holder record (`holders/<holder>/`) whose heartbeat keeps the reservation alive. */
  holder: z.string().min(1),
  nano_usd: NanoUsd,
  run_id: z.string(),
  work_dir: z.string(),
  hostname: z.string(),
  pid: z.number().int(),
  at: z.string(),
});
export type Reservation = z.infer<typeof ReservationSchema>;

const LedgerStateSchema = z.object({
  version: z.literal(LEDGER_VERSION),
  seq: z.number().int().positive(),
  limit_nano_usd: NanoUsd,
  /** What settled calls cost, and what reservations of dead holders were charged. */
  spent_nano_usd: NanoUsd,
  /** Of spent: reservations whose holder died with them (its call may have been billed), charged in full. */
  expired_nano_usd: NanoUsd,
  /** Model calls settled. */
  calls: z.number().int().nonnegative(),
  reservations: z.array(ReservationSchema),
  /** What this change was, for people reading the ledger's history. */
  change: z.string(),
  at: z.string(),
});
export type LedgerState = z.infer<typeof LedgerStateSchema>;

export function statesDir(ledger: string): string {
  return join(ledger, "states");
}

export function holdersDir(ledger: string): string {
  return join(ledger, "holders");
}

/** USD as whole nano-dollars; a reservation rounds up, so what it holds is never less than the price it was given. */
export function nanoUsd(usd: number, rounding: "up" | "nearest" = "nearest"): number {
  const nano = usd * 1e9;
  return Math.max(0, rounding === "up" ? Math.ceil(nano - 1e-6) : Math.round(nano));
}

export function usdOf(nano: number): number {
  return nano / 1e9;
}

export function reservedNano(state: LedgerState): number {
  return state.reservations.reduce((sum, reservation) => sum + reservation.nano_usd, 0);
}

/** The first state of a new ledger. */
export function firstState(limitNano: number): LedgerState {
  return { version: LEDGER_VERSION, seq: 1, limit_nano_usd: limitNano, spent_nano_usd: 0, expired_nano_usd: 0, calls: 0, reservations: [], change: `made with a limit of $${usdOf(limitNano)}`, at: new Date().toISOString() };
}

/** The state after `state` with `change` applied, numbered next. */
export function nextState(state: LedgerState, update: Partial<Omit<LedgerState, "version" | "seq" | "at">> & { change: string }): LedgerState {
  return { ...state, ...update, seq: state.seq + 1, at: new Date().toISOString() };
}

/**
 * The ledger's newest state. A listing of the states folder may lag behind on a network file system, so the states
 * after the highest one listed are looked for by name until one is missing.
 */
export function latestState(ledger: string): LedgerState {
  for (let attempt = 0; ; attempt += 1) {
    let state = readState(ledger, highestListed(ledger));
    for (let newer = state && readState(ledger, state.seq + 1); newer; newer = readState(ledger, newer.seq + 1)) state = newer;
    if (state !== null) return state;
    // Pruned between the listing and the read: newer states were written meanwhile.
    if (attempt >= 100) throw new Error(`the newest state of the budget ledger ${ledger} kept moving away`);
  }
}

/** Writes `state` as the next state if no other process wrote that number first: false when one did. */
export function commitState(ledger: string, state: LedgerState): boolean {
  if (!createExclusive(statesDir(ledger), stateName(state.seq), `${JSON.stringify(state)}\n`)) return false;
  const old = state.seq - KEPT_STATES;
  if (old >= 1) rmSync(join(statesDir(ledger), stateName(old)), { force: true });
  return true;
}

/** The states kept, oldest first, for a look at the ledger's history. */
export function keptStates(ledger: string): LedgerState[] {
  return listedSeqs(ledger)
    .sort((a, b) => a - b)
    .flatMap((seq) => readState(ledger, seq) ?? []);
}

function stateName(seq: number): string {
  return `${seq}.json`;
}

function listedSeqs(ledger: string): number[] {
  let names: string[];
  try {
    names = readdirSync(statesDir(ledger));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw notALedger(ledger);
    throw err;
  }
  return names.flatMap((name) => /^([1-9][0-9]{0,15})\.json$/.exec(name)?.[1] ?? []).map(Number);
}

function highestListed(ledger: string): number {
  const seqs = listedSeqs(ledger);
  if (seqs.length === 0) throw notALedger(ledger);
  return Math.max(...seqs);
}

/** The state numbered `seq`, or null when it does not exist (not yet, or pruned); a damaged one is refused, naming it. */
function readState(ledger: string, seq: number): LedgerState | null {
  const path = join(statesDir(ledger), stateName(seq));
  let text: string;
  try {
    text = readRunFile(path, MAX_STATE_BYTES);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BudgetLedgerError(`The budget ledger's state ${path} is not valid JSON (${(err as Error).message}); the engine writes these whole, so it was changed by hand. Restore it, or make a new ledger with \`delta budget init\`.`);
  }
  const state = LedgerStateSchema.safeParse(parsed);
  if (!state.success || state.data.seq !== seq) {
    const issue = state.success ? `seq ${state.data.seq} in the file named ${seq}` : `${state.error.issues[0]?.path.join(".") || "(state)"}: ${state.error.issues[0]?.message}`;
    throw new BudgetLedgerError(`The budget ledger's state ${path} is not one the engine wrote (${issue}). Restore it, or make a new ledger with \`delta budget init\`.`);
  }
  return state.data;
}

function notALedger(ledger: string): BudgetLedgerError {
  return new BudgetLedgerError(`${ledger} is not a budget ledger (it has no states/ folder); make one with \`delta budget init ${ledger} --limit-usd <dollars>\`.`);
}
