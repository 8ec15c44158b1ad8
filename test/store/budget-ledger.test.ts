// A budget ledger: made once with a limit, states numbered and created exclusively, reservations that wait for room, settle, and expire with a dead holder (fenced, charged in full).
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deadPid, fastBeatsAndALiveProcess } from "../support/lease-judging.js";
import { BudgetLedgerError } from "../../src/errors.js";
import { readProcStat } from "../../src/process/proc-stat.js";
import { initLedger, openLedger, setLedgerLimit, type LedgerFull, type LedgerTicket } from "../../src/store/budget/ledger.js";
import { commitState, holdersDir, keptStates, latestState, nanoUsd, nextState, statesDir, type Reservation } from "../../src/store/budget/ledger-state.js";
import { claimGeneration, ownRecord, paddedRecord, readRecord, recordPath, type OwnerRecord } from "../../src/store/lease/owner-record.js";

const BEAT_MS = 100;
let root: string;
let ledger: string;

// A node process that started before any record below names it: a record naming it is judged alive.
const lease = fastBeatsAndALiveProcess(BEAT_MS);
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "budget-ledger-"));
  ledger = join(root, "fleet.budget");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const usd = (dollars: number) => nanoUsd(dollars);
const quiet = { runId: "run-a", workDir: "/w", progress: () => {} };

function isTicket(value: LedgerTicket | LedgerFull): value is LedgerTicket {
  return !("full" in value);
}

/** A holder record and a reservation of `dollars` in the ledger, as process `pid` (of this host unless `changes` say) would have made them. */
function reservationOf(pid: number, dollars: number, changes: Partial<OwnerRecord> = {}): Reservation {
  const holder = `other-${pid}-${Math.random().toString(16).slice(2, 8)}`;
  expect(claimGeneration(join(holdersDir(ledger), holder), { ...ownRecord(1, null), pid, start_ticks: readProcStat(pid)?.startTicks ?? null, ...changes })).toBe(true);
  const reservation: Reservation = { id: `r-${holder}`, holder, nano_usd: usd(dollars), run_id: `run-of-${pid}`, work_dir: "/elsewhere", hostname: "h", pid, at: new Date().toISOString() };
  const state = latestState(ledger);
  expect(commitState(ledger, nextState(state, { reservations: [...state.reservations, reservation], change: "test" }))).toBe(true);
  return reservation;
}

/** Polls until `check` holds: for waiting on what another party writes, never for timing. */
async function waitUntil(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("budget init", () => {
  it("makes a private folder whose first state holds the limit, nothing spent; a second init is refused", () => {
    initLedger(ledger, usd(5));
    expect(statSync(ledger).mode & 0o777).toBe(0o700);
    expect(latestState(ledger)).toMatchObject({ seq: 1, limit_nano_usd: 5e9, spent_nano_usd: 0, reservations: [] });
    expect(() => initLedger(ledger, usd(9))).toThrow(/already exists; a ledger is made once/);
    expect(latestState(ledger).limit_nano_usd).toBe(5e9);
  });

  it("refuses a folder that is not a ledger, naming the command that makes one", () => {
    expect(() => latestState(root)).toThrow(BudgetLedgerError);
    expect(() => latestState(root)).toThrow(/is not a budget ledger .*delta budget init/);
  });

  it("refuses a state changed by hand, naming the file", () => {
    initLedger(ledger, usd(5));
    writeFileSync(join(statesDir(ledger), "2.json"), '{"version":1,"seq":2,"limit_nano_usd":-1}\n');
    expect(() => latestState(ledger)).toThrow(/states\/2\.json is not one the engine wrote \(limit_nano_usd/);
  });
});

describe("a state is written once", () => {
  it("of two changes computed from the same state, only the first is committed", () => {
    initLedger(ledger, usd(5));
    const state = latestState(ledger);
    expect(commitState(ledger, nextState(state, { spent_nano_usd: 1, change: "first" }))).toBe(true);
    expect(commitState(ledger, nextState(state, { spent_nano_usd: 2, change: "second" }))).toBe(false);
    expect(latestState(ledger)).toMatchObject({ seq: 2, spent_nano_usd: 1, change: "first" });
  });
});

describe("reservations", () => {
  it("reserve then settle: the reservation held while the call is in flight, then replaced by the real cost", async () => {
    initLedger(ledger, usd(1));
    const account = openLedger(ledger, quiet);
    const ticket = await account.reserve(usd(0.4));
    expect(isTicket(ticket)).toBe(true);
    expect(latestState(ledger).reservations).toMatchObject([{ nano_usd: usd(0.4), run_id: "run-a", pid: process.pid }]);
    (ticket as LedgerTicket).settle(usd(0.05));
    expect(latestState(ledger)).toMatchObject({ spent_nano_usd: usd(0.05), calls: 1, reservations: [] });
    account.close();
    expect(readdirSync(holdersDir(ledger))).toEqual([]);
  });

  it("a call that could pass the limit is not reserved: full, with the limit, what was spent and what it needs", async () => {
    initLedger(ledger, usd(1));
    const account = openLedger(ledger, quiet);
    (await account.reserve(usd(0.7)) as LedgerTicket).settle(usd(0.7));
    expect(await account.reserve(usd(0.31))).toEqual({ full: true, limitNano: usd(1), spentNano: usd(0.7), neededNano: usd(0.31) });
    expect(isTicket(await account.reserve(usd(0.3)))).toBe(true);
    account.close();
  });

  it("waits while a live process's reservation fills the room, and goes on once it settles", async () => {
    initLedger(ledger, usd(1));
    const theirs = reservationOf(lease.live.pid!, 0.8);
    const said: string[] = [];
    const account = openLedger(ledger, { ...quiet, progress: (line) => said.push(line) });
    const mine = account.reserve(usd(0.5));
    await waitUntil(() => said.length > 0);
    expect(said[0]).toMatch(/^\[budget\] waiting for room in .*: \$0\.8 of its \$1 left is reserved by 1 model call\(s\) in flight; this call needs \$0\.5$/);
    // The other process settles for less than it reserved, as its settle would write it.
    const state = latestState(ledger);
    expect(state.reservations.map((r) => r.id)).toEqual([theirs.id]);
    commitState(ledger, nextState(state, { reservations: [], spent_nano_usd: usd(0.1), calls: 1, change: "their settle" }));
    expect(isTicket(await mine)).toBe(true);
    expect(latestState(ledger)).toMatchObject({ spent_nano_usd: usd(0.1), reservations: [{ run_id: "run-a", nano_usd: usd(0.5) }] });
    account.close();
  });

  it("expires the reservation of a holder that died on this host: fenced (generation 2), charged in full, its record removed", async () => {
    initLedger(ledger, usd(1));
    const pid = await deadPid();
    const theirs = reservationOf(pid, 0.8);
    const account = openLedger(ledger, quiet);
    // Its call may have been billed: charged in full, the ledger has no room left for this one.
    expect(await account.reserve(usd(0.3))).toEqual({ full: true, limitNano: usd(1), spentNano: usd(0.8), neededNano: usd(0.3) });
    const state = latestState(ledger);
    expect(state).toMatchObject({ spent_nano_usd: usd(0.8), expired_nano_usd: usd(0.8), reservations: [] });
    expect(keptStates(ledger).some((s) => s.change.includes(`process ${pid} no longer exists`))).toBe(true);
    expect(existsSync(join(holdersDir(ledger), theirs.holder))).toBe(false);
    expect(isTicket(await account.reserve(usd(0.2)))).toBe(true);
    account.close();
  });

  it("expires a holder on another host only after its heartbeat stood still for five beats; a beating one is waited for", async () => {
    initLedger(ledger, usd(1));
    const elsewhere = { machine_id: "0123456789abcdef0123456789abcdef", boot_id: "00000000-1111-2222-3333-444444444444" };
    const beating = reservationOf(4242, 0.3, elsewhere);
    const silent = reservationOf(4243, 0.3, elsewhere);
    const lockDir = join(holdersDir(ledger), beating.holder);
    const beat = setInterval(() => {
      const record = readRecord(lockDir, 1)?.record;
      if (record) writeFileSync(recordPath(lockDir, 1), paddedRecord({ ...record, heartbeat: (record.heartbeat ?? 0) + 1 }));
    }, BEAT_MS / 2);
    try {
      const account = openLedger(ledger, quiet);
      const mine = account.reserve(usd(0.5));
      await waitUntil(() => latestState(ledger).expired_nano_usd > 0);
      // The silent one was charged and dropped, fenced off; the beating one still holds its room, so this call still waits.
      const state = latestState(ledger);
      expect(state).toMatchObject({ spent_nano_usd: usd(0.3), expired_nano_usd: usd(0.3) });
      expect(state.reservations.map((r) => r.id)).toEqual([beating.id]);
      expect(existsSync(join(holdersDir(ledger), silent.holder))).toBe(false);
      commitState(ledger, nextState(state, { reservations: [], spent_nano_usd: usd(0.4), calls: 1, change: "the beating one settles" }));
      expect(isTicket(await mine)).toBe(true);
      account.close();
    } finally {
      clearInterval(beat);
    }
  });

  it("a holder judged gone while it lived (a long stop) knows it, and its late settle charges nothing twice", async () => {
    initLedger(ledger, usd(1));
    const account = openLedger(ledger, quiet);
    const ticket = (await account.reserve(usd(0.6))) as LedgerTicket;
    const holder = latestState(ledger).reservations[0]!.holder;
    // Another process judges it gone: generation 2 fences it, and its reservation is charged in full.
    claimGeneration(join(holdersDir(ledger), holder), ownRecord(2, "judged gone in a test"));
    const state = latestState(ledger);
    commitState(ledger, nextState(state, { reservations: [], spent_nano_usd: usd(0.6), expired_nano_usd: usd(0.6), change: "expired" }));
    ticket.settle(usd(0.01));
    expect(latestState(ledger)).toMatchObject({ spent_nano_usd: usd(0.6), calls: 0 });
    // Its next reservation is made under a new holder record.
    const next = (await account.reserve(usd(0.1))) as LedgerTicket;
    expect(latestState(ledger).reservations[0]!.holder).not.toBe(holder);
    next.settle(0);
    account.close();
  });

  it("close charges in full what is still reserved (a call in flight when the process stopped)", async () => {
    initLedger(ledger, usd(1));
    const account = openLedger(ledger, quiet);
    await account.reserve(usd(0.25));
    account.close();
    expect(latestState(ledger)).toMatchObject({ spent_nano_usd: usd(0.25), reservations: [] });
  });

  it("budget set raises the limit; spent and reserved stay", async () => {
    initLedger(ledger, usd(1));
    const account = openLedger(ledger, quiet);
    (await account.reserve(usd(0.9)) as LedgerTicket).settle(usd(0.9));
    expect("full" in (await account.reserve(usd(0.5)))).toBe(true);
    setLedgerLimit(ledger, usd(2));
    expect(latestState(ledger)).toMatchObject({ limit_nano_usd: usd(2), spent_nano_usd: usd(0.9) });
    expect(isTicket(await account.reserve(usd(0.5)))).toBe(true);
    account.close();
  });
});
