// Tells the launcher which code paths a run has run — the journal event types this process appended — so a code cache made without them is made again with them (cli/run-bundle.ts).
import type { JournalEvent } from "../journal/events.js";

/** An append listener that reports each event type to `report` (the launcher helper's ranCodePath) the first time it is appended. */
export function codePathReporter(report: (name: string) => void): (event: JournalEvent) => void {
  const reported = new Set<string>();
  return (event) => {
    if (reported.has(event.type)) return;
    reported.add(event.type);
    report(event.type);
  };
}
