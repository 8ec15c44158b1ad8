// continue keeps a run to its pinned endpoints: the primary it started with, and the fallbacks its ENGINE_START journaled; a fallback pointing anywhere else is refused.
import { describe, expect, it } from "vitest";
import { EndpointChangedError } from "../../src/errors.js";
import type { EventOf } from "../../src/journal/events.js";
import { checkRunEndpoint, journaledEndpoint } from "../../src/run/run-endpoint.js";

const PRIMARY = { provider: "anthropic" as const, base_url: "https://api.anthropic.com" };
const OTHER = { provider: "openai" as const, base_url: "https://api.openai.com/v1" };

function start(fallback?: { provider: string; base_url: string; model: string }[]): EventOf<"ENGINE_START"> {
  return { seq: 1, timestamp: "t", type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", engine_version: "t", config: { endpoint: PRIMARY, ...(fallback ? { fallback } : {}) } };
}

const choice = (fallback: { provider: string; base_url: string }[], accepted = false) => ({ runId: "r", endpoint: PRIMARY, fallback, accepted, source: undefined });

describe("pinned fallback endpoints", () => {
  it("accepts the fallbacks the run started with, a model name on the primary's endpoint, and refuses a new endpoint unless accepted", () => {
    const pinned = journaledEndpoint([start([{ ...OTHER, model: "gpt-5-mini" }])]);
    expect(() => checkRunEndpoint(pinned, choice([OTHER, PRIMARY]))).not.toThrow();
    const moved = { provider: "openai", base_url: "https://elsewhere.example/v1" };
    expect(() => checkRunEndpoint(pinned, choice([moved]))).toThrow(EndpointChangedError);
    expect(() => checkRunEndpoint(pinned, choice([moved]))).toThrow(/would also send it to https:\/\/elsewhere\.example\/v1 \(openai\).*--accept-endpoint/);
    expect(() => checkRunEndpoint(pinned, choice([moved], true))).not.toThrow();
  });

  it("a run started without fallbacks takes none to another endpoint on continue", () => {
    expect(() => checkRunEndpoint(journaledEndpoint([start()]), choice([OTHER]))).toThrow(EndpointChangedError);
  });
});
