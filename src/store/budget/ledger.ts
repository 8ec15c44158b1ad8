// A budget ledger many runs share, on one host or a shared file system: made with a limit; each model call's worst case reserved before it is sent and its real cost settled after; reservations of dead holders expired and charged.
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { BudgetLedgerError } from "../../errors.js";
import { pausePoint } from "../../pause-point.js";
import { PRIVATE_DIR_MODE } from "../../private-modes.js";
import { randomHex } from "../../random-hex.js";
import { HolderJudge, newHolder, removeHolder, type LedgerHolder } from "./holders.js";
import { commitState, firstState, holdersDir, keptStates, latestState, nextState, reservedNano, statesDir, usdOf, type LedgerState, type Reservation } from "./ledger-state.js";

/** How often a call waiting for room looks at the ledger again. */
const WAIT_POLL_MS = 100;

/** Makes a new ledger at `ledger` (a folder) with a limit of `limitNano`; refuses one that exists. */
export function initLedger(ledger: string, limitNano: number): LedgerState {
  try {
    mkdirSync(ledger, { mode: PRIVATE_DIR_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      throw new BudgetLedgerError(`${ledger} already exists; a ledger is made once. See it with \`delta budget show ${ledger}\`, change its limit with \`delta budget set ${ledger} --limit-usd <dollars>\`.`);
    }
    throw new BudgetLedgerError(`Cannot make the budget ledger ${ledger}: ${(err as Error).message}`, { cause: err });
  }
  mkdirSync(statesDir(ledger), { mode: PRIVATE_DIR_MODE });
  mkdirSync(holdersDir(ledger), { mode: PRIVATE_DIR_MODE });
  const first = firstState(limitNano);
  commitState(ledger, first);
  return first;
}

/** Gives the ledger a new limit (raised after a BUDGET_EXHAUSTED, or lowered); what was spent and reserved stays. */
export function setLedgerLimit(ledger: string, limitNano: number): LedgerState {
  return change(ledger, (state) => nextState(state, { limit_nano_usd: limitNano, change: `limit set to $${usdOf(limitNano)} (was $${usdOf(state.limit_nano_usd)})` }));
}

/** Applies `update` to the newest state, computing it again whenever another process changed the ledger first. */
function change(ledger: string, update: (state: LedgerState) => LedgerState | null): LedgerState {
  for (;;) {
    const state = latestState(ledger);
    const next = update(state);
    if (next === null || commitState(ledger, next)) return next ?? state;
  }
}

/** What `delta budget show` prints: the limit, what was spent and is reserved (and by whom), the room left, the latest changes. */
export interface LedgerSummary {
  ledger: string;
  limit_usd: number;
  spent_usd: number;
  reserved_usd: number;
  room_usd: number;
  /** Of spent: reservations of holders that died with them, charged in full. */
  expired_usd: number;
  calls: number;
  reservations: { run_id: string; work_dir: string; hostname: string; pid: number; usd: number; since: string }[];
  /** The newest changes first, as kept in states/. */
  recent: { seq: number; at: string; change: string }[];
}

export function ledgerSummary(ledger: string, recent = 10): LedgerSummary {
  const state = latestState(ledger);
  const reserved = reservedNano(state);
  return {
    ledger,
    limit_usd: usdOf(state.limit_nano_usd),
    spent_usd: usdOf(state.spent_nano_usd),
    reserved_usd: usdOf(reserved),
    room_usd: usdOf(Math.max(0, state.limit_nano_usd - state.spent_nano_usd - reserved)),
    expired_usd: usdOf(state.expired_nano_usd),
    calls: state.calls,
    reservations: state.reservations.map((held) => ({ run_id: held.run_id, work_dir: held.work_dir, hostname: held.hostname, pid: held.pid, usd: usdOf(held.nano_usd), since: held.at })),
    recent: keptStates(ledger).reverse().slice(0, recent).map((kept) => ({ seq: kept.seq, at: kept.at, change: kept.change })),
  };
}

/** Room held for one model call, to settle with its real cost once it is known. */
export interface LedgerTicket {
  id: string;
  nanoUsd: number;
  /** Replaces the reservation with what the call cost; a reservation already expired was charged in full, and stays so. */
  settle(nanoUsd: number): void;
}

/** The ledger cannot hold the call even with no other call in flight: its limit is reached. */
export interface LedgerFull {
  full: true;
  limitNano: number;
  spentNano: number;
  neededNano: number;
}

/** Who reserves: named in each reservation, for `budget show`. */
interface Reserver {
  runId: string;
  workDir: string;
  /** Said once when a call starts waiting for room that calls in flight hold. */
  progress: (line: string) => void;
}

/** One process's account with a ledger: its holder record (made at its first reservation) and its reservations. */
export interface LedgerAccount {
  readonly path: string;
  /** Reserves `nanoUsd` for one model call; waits while calls in flight fill the room (expiring dead holders'); full when even an empty ledger could not hold it. */
  reserve(nanoUsd: number, signal?: AbortSignal): Promise<LedgerTicket | LedgerFull>;
  /** Charges what is still reserved in full (a call in flight when the process stopped may have been billed) and lets the holder record go. */
  close(): void;
}

/** This process's account with `ledger` (checked to be one before the run began): nothing is written until its first reservation. */
export function openLedger(ledger: string, reserver: Reserver): LedgerAccount {
  let holder: LedgerHolder | null = null;
  const open = new Map<string, LedgerTicket>();
  const judge = new HolderJudge(ledger);

  /** This process's holder, made again when another process judged the last one gone (a long stop) and charged its reservations. */
  const currentHolder = (): LedgerHolder => {
    if (holder === null || holder.hold.lostReason() !== null) {
      holder?.hold.release();
      holder = newHolder(ledger);
    }
    return holder;
  };

  const ticketFor = (reservation: Reservation): LedgerTicket => {
    const ticket: LedgerTicket = {
      id: reservation.id,
      nanoUsd: reservation.nano_usd,
      settle(nanoUsd) {
        open.delete(reservation.id);
        change(ledger, (state) => {
          if (!state.reservations.some((held) => held.id === reservation.id)) return null;
          return nextState(state, {
            reservations: state.reservations.filter((held) => held.id !== reservation.id),
            spent_nano_usd: state.spent_nano_usd + nanoUsd,
            calls: state.calls + 1,
            change: `settled ${reservation.id} of run ${reservation.run_id}: $${usdOf(nanoUsd)} of $${usdOf(reservation.nano_usd)} reserved`,
          });
        });
      },
    };
    open.set(reservation.id, ticket);
    return ticket;
  };

  return {
    path: ledger,
    async reserve(nanoUsd, signal) {
      let said = false;
      for (;;) {
        const state = latestState(ledger);
        if (state.spent_nano_usd + nanoUsd > state.limit_nano_usd) return { full: true, limitNano: state.limit_nano_usd, spentNano: state.spent_nano_usd, neededNano: nanoUsd };
        const reserved = reservedNano(state);
        if (state.spent_nano_usd + reserved + nanoUsd <= state.limit_nano_usd) {
          const mine = currentHolder();
          const reservation: Reservation = { id: `r-${randomHex(6)}`, holder: mine.id, nano_usd: nanoUsd, run_id: reserver.runId, work_dir: reserver.workDir, hostname: hostname(), pid: process.pid, at: new Date().toISOString() };
          pausePoint("ledger-change-computed");
          const next = nextState(state, { reservations: [...state.reservations, reservation], change: `reserved ${reservation.id} for run ${reserver.runId}: $${usdOf(nanoUsd)}` });
          if (commitState(ledger, next)) return ticketFor(reservation);
          continue;
        }
        // The room is held by calls in flight: they settle (for less, mostly), or expire with a dead holder.
        if (expireDead(ledger, state, judge, holder?.id ?? null)) continue;
        if (!said) {
          said = true;
          reserver.progress(`[budget] waiting for room in ${ledger}: $${usdOf(reserved)} of its $${usdOf(state.limit_nano_usd - state.spent_nano_usd)} left is reserved by ${state.reservations.length} model call(s) in flight; this call needs $${usdOf(nanoUsd)}`);
        }
        try {
          await sleep(WAIT_POLL_MS, undefined, { signal });
        } catch {
          throw new BudgetLedgerError(`Interrupted while waiting for room in the budget ledger ${ledger}; nothing was reserved.`);
        }
      }
    },
    close() {
      for (const ticket of [...open.values()]) ticket.settle(ticket.nanoUsd);
      if (holder !== null) {
        const lost = holder.hold.lostReason() !== null;
        holder.hold.release();
        // A holder another process judged gone is that process's to remove, with the reservations it charged.
        if (!lost) removeHolder(ledger, holder.id);
        holder = null;
      }
    },
  };
}

/**
 * Charges and drops the reservations of holders found dead (judged, and fenced off them), then removes their records;
 * true when the ledger changed. Never judges this process's own holder.
 */
function expireDead(ledger: string, state: LedgerState, judge: HolderJudge, own: string | null): boolean {
  const dead = new Map<string, string>();
  for (const id of new Set(state.reservations.map((reservation) => reservation.holder))) {
    if (id === own) continue;
    const reason = judge.deadHolder(id);
    if (reason !== null) dead.set(id, reason);
  }
  if (dead.size === 0) return false;
  change(ledger, (now) => {
    const expired = now.reservations.filter((reservation) => dead.has(reservation.holder));
    if (expired.length === 0) return null;
    const charged = expired.reduce((sum, reservation) => sum + reservation.nano_usd, 0);
    const why = [...dead].map(([id, reason]) => `${id} (${reason})`).join("; ");
    return nextState(now, {
      reservations: now.reservations.filter((reservation) => !dead.has(reservation.holder)),
      spent_nano_usd: now.spent_nano_usd + charged,
      expired_nano_usd: now.expired_nano_usd + charged,
      change: `expired ${expired.length} reservation(s) of holder(s) gone, charged in full ($${usdOf(charged)}): ${why}`,
    });
  });
  for (const id of dead.keys()) removeHolder(ledger, id);
  return true;
}
