// A checked replay: recorded replies while each request equals the recorded one; at the first that differs, the live model (--until-divergence) or REPLAY_DIVERGED (--replay-strict), told once before anything is sent.
import { describe, expect, it } from "vitest";
import type { LlmReply, LlmRequest } from "../../src/conversation.js";
import { ReplayDivergedError, ReplayError } from "../../src/errors.js";
import { createReplayProvider, type Divergence, type Recording, type ReplayCheckMode } from "../../src/llm/replay.js";
import type { RunFacts } from "../../src/llm/request-equality.js";
import type { Provider } from "../../src/llm/types.js";

const RECORDED: RunFacts = { runIds: ["rec-1"], workDir: "/work/ws-rec", agentHome: "/work/agent" };
const THIS_RUN: RunFacts = { runIds: ["again-2"], workDir: "/work/ws-again", agentHome: "/work/agent" };

const tools = [{ type: "function" as const, function: { name: "ls", description: "List", parameters: { type: "object" } } }];
const requestIn = (facts: RunFacts, turns: string[]): LlmRequest => ({ model: "m", tools, params: {}, messages: [{ role: "system", content: "Be brief." }, ...turns.map((content) => ({ role: "user" as const, content: `${content} in ${facts.workDir}` }))] });
const answer = (content: string): LlmReply => ({ content, tool_calls: [], usage: null, model: "m", finish_reason: "stop" });

/** A recording of two calls, made in RECORDED's workspace. */
function recording(): Recording {
  const requests = [requestIn(RECORDED, ["one"]), requestIn(RECORDED, ["one", "two"])];
  return { origin: "run directory rec", count: 2, reply: (index) => answer(`recorded ${index + 1}`), overflows: new Map(), requests: { facts: RECORDED, request: (index) => requests[index]! } };
}

/** A model that answers and counts what it was asked. */
function liveModel(): Provider & { asked: LlmRequest[] } {
  const asked: LlmRequest[] = [];
  return { name: "live", asked, complete: async (request) => (asked.push(request), answer(`live ${asked.length}`)) };
}

function checked(mode: ReplayCheckMode, live: Provider | null = null) {
  const told: Divergence[] = [];
  const provider = createReplayProvider(recording(), { check: { mode, live, run: { facts: THIS_RUN, diverged: (divergence) => told.push(divergence) } } });
  return { provider, told };
}

describe("--until-divergence", () => {
  it("plays every recorded reply and asks the model nothing while the requests are equal once normalized", async () => {
    const live = liveModel();
    const { provider, told } = checked("until-divergence", live);
    expect((await provider.complete(requestIn(THIS_RUN, ["one"]))).content).toBe("recorded 1");
    expect((await provider.complete(requestIn(THIS_RUN, ["one", "two"]))).content).toBe("recorded 2");
    expect(live.asked).toEqual([]);
    expect(told).toEqual([]);
  });

  it("goes live at the first request that differs, says so once with the part, and stays live", async () => {
    const live = liveModel();
    const { provider, told } = checked("until-divergence", live);
    expect((await provider.complete(requestIn(THIS_RUN, ["one"]))).content).toBe("recorded 1");
    expect((await provider.complete(requestIn(THIS_RUN, ["one", "TWO"]))).content).toBe("live 1");
    expect((await provider.complete(requestIn(THIS_RUN, ["one", "two"]))).content).toBe("live 2");
    expect(told).toEqual([{ recordedCall: 2, then: "live", parts: [expect.objectContaining({ part: "messages", summary: "message 3 (user) changed" })] }]);
    expect(live.asked).toHaveLength(2);
  });

  it("goes live past the end of the recording", async () => {
    const live = liveModel();
    const { provider, told } = checked("until-divergence", live);
    await provider.complete(requestIn(THIS_RUN, ["one"]));
    await provider.complete(requestIn(THIS_RUN, ["one", "two"]));
    expect((await provider.complete(requestIn(THIS_RUN, ["one", "two", "three"]))).content).toBe("live 1");
    expect(told).toEqual([{ recordedCall: 3, then: "live", parts: [] }]);
  });
});

describe("--replay-strict", () => {
  it("throws REPLAY_DIVERGED at the first request that differs, having told where, and asks no model", async () => {
    const { provider, told } = checked("strict");
    await expect(provider.complete({ ...requestIn(THIS_RUN, ["one"]), model: "other" })).rejects.toThrow(ReplayDivergedError);
    expect(told).toEqual([{ recordedCall: 1, then: "stopped", parts: [expect.objectContaining({ part: "model", summary: "the model changed: m → other" })] }]);
  });

  it("refuses a recording of replies only", () => {
    const { requests: _none, ...repliesOnly } = recording();
    expect(() => createReplayProvider(repliesOnly, { check: { mode: "strict", live: null, run: { facts: THIS_RUN, diverged: () => undefined } } })).toThrow(ReplayError);
  });
});
