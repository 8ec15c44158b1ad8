// kill -9 at random moments of many multi-step runs, then `delta continue`: no run lost, no tool re-run behind the model's back.
import { describe, expect, it } from "vitest";
import { runCrashCampaign } from "../support/crash-campaign.js";

const RUNS = Number(process.env.DELTA_CRASH_RUNS ?? 12);
const SEED = Number(process.env.DELTA_CRASH_SEED ?? 20261123);
const CONCURRENCY = Number(process.env.DELTA_CRASH_CONCURRENCY ?? 6);

describe("crash campaign", () => {
  it(`recovers every one of ${RUNS} runs killed with SIGKILL (seed ${SEED})`, async () => {
    const report = await runCrashCampaign({ runs: RUNS, seed: SEED, concurrency: CONCURRENCY });
    const byMode = (mode: string) => report.runs.filter((run) => run.mode === mode && run.killed).length;
    const recoveredBy = (how: string) => report.runs.filter((run) => run.killed && run.recovery === how).length;
    console.log(
      `crash campaign (seed ${SEED}): ${report.runs.length} runs, killed ${report.killed} ` +
        `(model call ${byMode("model")}, tool ${byMode("tool")}, claim ${byMode("claim")}, random ${byMode("random")}), ` +
        `recovered ${report.recovered} (${recoveredBy("continue")} by continue, ${recoveredBy("rerun")} by starting again: killed before the run existed, ` +
        `${recoveredBy("none")} had already recorded COMPLETED), lost ${report.lost}; ` +
        `${report.synthesized} cut tool calls told to the model, ${report.markerExecutions} tool executions for ` +
        `${report.nonSynthesizedMarkResults} real results`,
    );
    expect(report.problems).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.recovered).toBe(report.killed);
    // Kills during a model call and during a tool are aimed, so they always land.
    expect(byMode("model") + byMode("tool")).toBeGreaterThanOrEqual(Math.floor(RUNS / 2));
  }, Math.max(60_000, RUNS * 5_000));
});
