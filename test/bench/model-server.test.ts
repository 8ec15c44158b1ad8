// The benchmark's model server: it finds each run's progress from the conversation, even when the journal is windowed.
import { describe, expect, it } from "vitest";
import { nextStep } from "../../bench/lib/model-server.mjs";

const user = { role: "user", content: "turns=3 key=run-a" };

describe("bench model server", () => {
  it("starts a run at call 1 and finishes it at call N", () => {
    expect(nextStep([{ role: "system", content: "prompt" }, user])).toEqual({ key: "run-a", call: 1, turns: 3, final: false });
    expect(nextStep([{ role: "user", content: "turns=1 key=k" }])).toEqual({ key: "k", call: 1, turns: 1, final: true });
  });

  it("counts from the last tool message, so a window that dropped earlier iterations still ends on time", () => {
    const windowed = [user, { role: "assistant", content: null }, { role: "tool", content: "2/3\n" }];
    expect(nextStep(windowed)).toEqual({ key: "run-a", call: 3, turns: 3, final: true });
  });

  it("refuses a conversation without a `turns=N key=K` message", () => {
    expect(nextStep([{ role: "user", content: "hello" }])).toBeNull();
  });
});
