// kill -9 at random moments of many multi-step runs, then `delta continue`: no run lost, no tool re-run behind the model's back.
// Race mode also recovers each run with several processes at once, one of which may be killed too: one writer, always.
import { describe, expect, it } from "vitest";
import { runCrashCampaign, type CampaignReport } from "../support/crash-campaign.js";

const RUNS = Number(process.env.DELTA_CRASH_RUNS ?? 12);
const RACE_RUNS = Number(process.env.DELTA_CRASH_RACE_RUNS ?? 8);
const RACERS = Number(process.env.DELTA_CRASH_RACERS ?? 3);
const SEED = Number(process.env.DELTA_CRASH_SEED ?? 20261123);
const CONCURRENCY = Number(process.env.DELTA_CRASH_CONCURRENCY ?? 6);

function killedBy(report: CampaignReport, mode: string): number {
  return report.runs.filter((run) => run.mode === mode && run.killed).length;
}

function describeKills(report: CampaignReport): string {
  const recoveredBy = (how: string) => report.runs.filter((run) => run.killed && run.recovery === how).length;
  return `${report.runs.length} runs, killed ${report.killed} ` +
    `(model call ${killedBy(report, "model")}, tool ${killedBy(report, "tool")}, claim ${killedBy(report, "claim")}, random ${killedBy(report, "random")}), ` +
    `recovered ${report.recovered} (${recoveredBy("continue")} by continue, ${recoveredBy("rerun")} by starting again: killed before the run existed, ` +
    `${recoveredBy("none")} had already recorded COMPLETED), lost ${report.lost}, duplicated ${report.duplicated}, invalid journals ${report.invalidJournals}; ` +
    `${report.synthesized} cut tool calls told to the model, ${report.markerExecutions} tool executions for ${report.nonSynthesizedMarkResults} real results`;
}

function expectNothingLost(report: CampaignReport, runs: number): void {
  expect(report.problems).toEqual([]);
  expect(report.lost).toBe(0);
  expect(report.duplicated).toBe(0);
  expect(report.invalidJournals).toBe(0);
  expect(report.recovered).toBe(report.killed);
  // Kills during a model call and during a tool are aimed, so they always land.
  expect(killedBy(report, "model") + killedBy(report, "tool")).toBeGreaterThanOrEqual(Math.floor(runs / 2));
}

describe("crash campaign", () => {
  it(`recovers every one of ${RUNS} runs killed with SIGKILL (seed ${SEED})`, async () => {
    const report = await runCrashCampaign({ runs: RUNS, seed: SEED, concurrency: CONCURRENCY });
    console.log(`crash campaign (seed ${SEED}): ${describeKills(report)}`);
    expectNothingLost(report, RUNS);
  }, Math.max(60_000, RUNS * 5_000));

  it(`race mode: recovers every one of ${RACE_RUNS} killed runs with ${RACERS} processes racing to continue each (seed ${SEED})`, async () => {
    const report = await runCrashCampaign({ runs: RACE_RUNS, seed: SEED + 1, concurrency: Math.max(1, Math.floor(CONCURRENCY / 2)), racers: RACERS });
    console.log(
      `crash campaign, race mode (seed ${SEED + 1}, ${RACERS} racers): ${describeKills(report)}; ` +
        `${report.racers} racing processes: ${report.refused} refused (126), ${report.racersKilled} killed mid-way`,
    );
    expectNothingLost(report, RACE_RUNS);
    expect(report.refused).toBeGreaterThan(0);
  }, Math.max(60_000, RACE_RUNS * 10_000));
});
