// The code paths a run reports to the launcher's code cache: each event type once, as it is first appended.
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { codePathReporter } from "../../src/run/code-paths.js";

const event = (type: string): JournalEvent => ({ type }) as JournalEvent;

describe("codePathReporter", () => {
  it("reports each event type the first time it is appended, and only then", () => {
    const reports: string[] = [];
    const seen = codePathReporter((name) => reports.push(name));
    for (const type of ["USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "THOUGHT", "ENGINE_END"]) seen(event(type));
    expect(reports).toEqual(["USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "ENGINE_END"]);
  });
});
