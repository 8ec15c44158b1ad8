// The build's account in engine.log: a window move reads as `delta show` and the HTML report say it, word for word.
import { describe, expect, it } from "vitest";
import { buildContext } from "../../src/context/build.js";
import { contextBudget } from "../../src/context/budget.js";
import { conversationChars } from "../../src/context/log-account.js";
import { ContextConfigSchema } from "../../src/context/schema.js";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { describeWindowMove } from "../../src/journal/window-move.js";
import { eventDetails } from "../../src/report/html-events.js";
import { createEventFormatter } from "../../src/report/show-text.js";
import { textStyle } from "../../src/report/text-style.js";
import { shownJournalOf } from "../support/journal-read.js";
import { inheritedEnv } from "../support/inherited-env.js";

const at = (seq: number, event: Record<string, unknown>): JournalEvent => ({ seq, timestamp: "2025-01-01T00:00:00.000Z", ...event }) as JournalEvent;

function journal(count: number): JournalEvent[] {
  const events: JournalEvent[] = [at(1, { type: "USER_MESSAGE", content: "do the thing" })];
  for (let n = 1; n <= count; n += 1) {
    events.push(at(events.length + 1, { type: "THOUGHT", iteration: n, content: null, tool_calls: [{ id: `c${n}`, name: "read", arguments: "{}" }], usage: null, model: "m" }));
    events.push(at(events.length + 1, { type: "ACTION_RESULT", iteration: n, action_id: `c${n}`, tool_name: "read", status: "SUCCESS", observation_content: `${n} ${"x".repeat(300)}`, exit_code: 0, duration_ms: 1 }));
  }
  return events;
}

describe("the log's account of a window move", () => {
  it("is the sentence show and the HTML report print for the same CONTEXT_WINDOW event", async () => {
    const config = ContextConfigSchema.parse({ sources: [{ type: "journal", max_iterations: 4 }] });
    const events = journal(6);
    const lines: string[] = [];
    const built = await buildContext(config, { agentHome: "/agent", cwd: "/work", runId: "run-1", runDir: "/work/.delta/run-1", journalPath: "/work/.delta/run-1/journal.jsonl", baseEnv: inheritedEnv, journal: shownJournalOf(events), budget: contextBudget({ model: "local-model", max_tokens: 100 }, config), log: (line) => lines.push(line) });
    expect(built.windowEvent).toMatchObject({ type: "CONTEXT_WINDOW", reason: "max_iterations" });
    const journaled = { ...built.windowEvent!, seq: events.length + 1, timestamp: "2025-01-01T00:00:01.000Z" } as EventOf<"CONTEXT_WINDOW">;

    const sentence = "iterations 1–4 dropped (more than max_iterations 4); the context shows iteration 5 on";
    expect(describeWindowMove(journaled)).toBe(sentence);
    const logged = lines.filter((line) => line.startsWith("context: window moved"));
    expect(logged).toEqual([`context: window moved: ${sentence}`]);
    expect(createEventFormatter(textStyle(false))(journaled).join("\n")).toContain(`window ${sentence}`);
    expect(eventDetails(journaled, null).text).toContain(`[7] ${sentence}`);
  });
});

describe("conversationChars", () => {
  it("sums a growing array's characters as a fresh count of it does, window by window", () => {
    const events = journal(12);
    for (const firstOf of [() => 1, (length: number) => 1 + Math.floor(length / 7)]) {
      const growing: JournalEvent[] = [];
      for (const event of events) {
        growing.push(event);
        const first = firstOf(growing.length);
        expect(conversationChars(growing, first)).toBe(conversationChars([...growing], first));
      }
    }
    // A count from the first iteration on: the task, twelve replies with their calls' arguments, twelve results.
    expect(conversationChars(events, 1)).toBe(conversationChars([...events], 1));
    expect(conversationChars(events, 13)).toBe("do the thing".length + 4);
  });
});
