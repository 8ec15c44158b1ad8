// `delta budget init|show|set <ledger>`: makes a fleet's budget ledger, prints what it holds (limit, spent, reserved and by whom), changes its limit.
import { resolve } from "node:path";
import { UsageError } from "../../errors.js";
import { initLedger, ledgerSummary, setLedgerLimit, type LedgerSummary } from "../../store/budget/ledger.js";
import { nanoUsd } from "../../store/budget/ledger-state.js";
import { terminalSafe } from "../../terminal-text.js";
import type { CliIo } from "../io.js";
import { optionalString, parseFormat } from "../options.js";

export async function budgetCommand(action: "init" | "show" | "set", given: string, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const ledger = resolve(given);
  if (action === "show") {
    const format = parseFormat(flags.format, ["text", "json"]);
    if (flags.limitUsd !== undefined) throw new UsageError("--limit-usd goes with init or set; show only reads the ledger.");
    const summary = ledgerSummary(ledger);
    io.out(format === "json" ? `${JSON.stringify(summary, null, 2)}\n` : terminalSafe(summaryText(summary)));
    return 0;
  }
  if (flags.format !== undefined) throw new UsageError(`--format goes with show; budget ${action} prints one line.`);
  const limit = limitFlag(flags, action, given);
  const state = action === "init" ? initLedger(ledger, limit) : setLedgerLimit(ledger, limit);
  io.out(`${ledger}: ${state.change}\n`);
  if (action === "init") io.err(`Runs reserve each model call in it with --budget-file ${ledger} (or DELTA_BUDGET_FILE=${ledger}); their agent needs llm.pricing.\n`);
  return 0;
}

function limitFlag(flags: Record<string, unknown>, action: string, ledger: string): number {
  const text = optionalString("--limit-usd", flags.limitUsd);
  if (text === undefined) throw new UsageError(`delta budget ${action} needs the fleet's limit: delta budget ${action} ${ledger} --limit-usd <dollars>`);
  const dollars = Number(text);
  if (!Number.isFinite(dollars) || dollars < 0 || text.trim() === "") throw new UsageError(`--limit-usd takes an amount of dollars, 0 or more, e.g. --limit-usd 100 (got '${text}').`);
  return nanoUsd(dollars);
}

function summaryText(summary: LedgerSummary): string {
  const money = (usd: number): string => `$${Math.round(usd * 1e6) / 1e6}`;
  const lines = [
    `ledger    ${summary.ledger}`,
    `limit     ${money(summary.limit_usd)}`,
    `spent     ${money(summary.spent_usd)} in ${summary.calls} settled call${summary.calls === 1 ? "" : "s"}${summary.expired_usd > 0 ? ` (of which ${money(summary.expired_usd)} for calls of processes that died with them, charged in full)` : ""}`,
    `reserved  ${money(summary.reserved_usd)} by ${summary.reservations.length} call${summary.reservations.length === 1 ? "" : "s"} in flight`,
    `room      ${money(summary.room_usd)}`,
    ...summary.reservations.map((held) => `  ${money(held.usd)}  run ${held.run_id} (${held.work_dir}), pid ${held.pid} on ${held.hostname}, since ${held.since}`),
    "recent changes:",
    ...summary.recent.map((change) => `  ${change.seq}  ${change.at}  ${change.change}`),
  ];
  return `${lines.join("\n")}\n`;
}
