// A holder that releases and removes its record while another process judges it (their race, forced: the record's
// folder is removed right as the judge writes the fencing generation): the judge finds it gone, never an engine error.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { deadPid } from "../support/lease-judging.js";
import { HolderJudge } from "../../src/store/budget/holders.js";
import { initLedger, openLedger } from "../../src/store/budget/ledger.js";
import { commitState, holdersDir, latestState, nanoUsd, nextState, type Reservation } from "../../src/store/budget/ledger-state.js";
import { claimGeneration, ownRecord } from "../../src/store/lease/owner-record.js";

/** Holder folders whose fencing generation, when a judge writes it, finds the holder gone a moment before: what the holder did then. */
const vanishing = new Map<string, () => void>();
vi.mock("../../src/store/exclusive-file.js", async (importActual) => {
  const actual = await importActual<typeof import("../../src/store/exclusive-file.js")>();
  return {
    ...actual,
    createExclusive: (dir: string, name: string, text: string): boolean => {
      const holderLeaves = name === "2.json" ? vanishing.get(basename(dir)) : undefined;
      if (holderLeaves !== undefined) {
        holderLeaves();
        rmSync(dir, { recursive: true, force: true });
      }
      return actual.createExclusive(dir, name, text);
    },
  };
});

let root: string;
let ledger: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "holder-gone-"));
  ledger = join(root, "fleet.budget");
  initLedger(ledger, nanoUsd(1));
});
afterEach(() => {
  vanishing.clear();
  rmSync(root, { recursive: true, force: true });
});

/** A holder record of process `pid`, which does `leaving` and removes its folder as a judge fences it. */
function vanishingHolder(pid: number, leaving: () => void = () => {}): string {
  const holder = `other-${pid}-gone`;
  expect(claimGeneration(join(holdersDir(ledger), holder), { ...ownRecord(1, null), pid })).toBe(true);
  vanishing.set(holder, leaving);
  return holder;
}

it("a judge whose fencing write meets the holder's folder removed finds the holder gone", async () => {
  const holder = vanishingHolder(await deadPid());
  expect(new HolderJudge(ledger).deadHolder(holder)).toBe("its holder record is gone");
  expect(existsSync(join(holdersDir(ledger), holder))).toBe(false);
});

it("a call waiting for room goes on when the holder it judges settles and removes its record meanwhile, nothing charged twice", async () => {
  const pid = await deadPid();
  const reservation: Reservation = { id: "r-theirs", holder: `other-${pid}-gone`, nano_usd: nanoUsd(0.9), run_id: "theirs", work_dir: "/w", hostname: "h", pid, at: new Date().toISOString() };
  // As the ledger's close does: the call settled for what it cost, then the record removed.
  const settles = (): void => {
    const now = latestState(ledger);
    expect(commitState(ledger, nextState(now, { reservations: [], spent_nano_usd: now.spent_nano_usd + nanoUsd(0.1), change: "test: settled" }))).toBe(true);
  };
  vanishingHolder(pid, settles);
  // What the judge reads: the holder's reservation fills the room.
  expect(commitState(ledger, nextState(latestState(ledger), { reservations: [reservation], change: "test: reserved" }))).toBe(true);
  const account = openLedger(ledger, { runId: "mine", workDir: "/w", progress: () => {} });
  const ticket = await account.reserve(nanoUsd(0.5));
  expect("full" in ticket).toBe(false);
  expect(latestState(ledger)).toMatchObject({ spent_nano_usd: nanoUsd(0.1), expired_nano_usd: 0 });
  account.close();
});
