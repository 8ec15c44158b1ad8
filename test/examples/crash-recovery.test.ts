// The crash-recovery example: fan out runs with client-made ids, kill -9 some mid-tool, recover all with list-runs + continue.
import { join } from "node:path";
import { readJournal } from "../support/journal-read.js";
import { beforeAll, describe, expect, it } from "vitest";

import type { JournalEvent } from "../../src/journal/events.js";
import { type MockLlm, reply, taskOf, toolResultsOf } from "../support/mock-llm.js";
import { modelEnv, runDir, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith, runScript } from "./helpers.js";

const SCRIPT = join(EXAMPLES, "crash-recovery/fan-out-and-recover.sh");
const RUNS = 4;
const KILLS = 2;

const { root, serve } = setUpE2e("delta-crash-");
let server: MockLlm;

beforeAll(async () => {
  // Each run: process its item with a tool call, then answer "done <item>" once it has a tool result.
  // The runs the script kills get a slower tool, so the kill lands while the tool runs.
  server = await serve((request) => {
    const item = /Process item (\d+)/.exec(taskOf(request))?.[1] ?? "?";
    return toolResultsOf(request).length > 0
      ? reply.text(`done ${item}`)
      : reply.toolCalls([{ name: "process_item", arguments: { item, seconds: Number(item) <= KILLS ? "4" : "1" } }]);
  });
});

describe("examples/crash-recovery/fan-out-and-recover.sh", { timeout: 120_000 }, () => {
  it("runs without a key on the shipped recording (-r): kills, recovers, and every run replays to COMPLETED", async () => {
    const ws = join(root, "ws-replayed");
    const result = await runScript(SCRIPT, ["-w", ws, "-n", "3", "-k", "1", "-p", "rec", "-l", join(root, "logs-replayed"), "-r", join(EXAMPLES, "crash-recovery/agent/recording.jsonl")], {
      cwd: root,
      env: { PATH: pathWith(binDir(join(root, "replayed"))) },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe("started 3\nkilled 1\nrecovered 1\nwaiting 0\nlost 0\n");
    for (const id of ["rec-1", "rec-2", "rec-3"]) {
      const events = readJournal(join(runDir(ws, id), "journal.jsonl"));
      expect(events.find((e) => e.type === "ENGINE_START")).toMatchObject({ config: { provider: "replay" } });
      expect(events.filter((e) => e.type === "THOUGHT").at(-1)).toMatchObject({ content: "done recorded-item" });
    }
    expect(readJournal(join(runDir(ws, "rec-1"), "journal.jsonl")).some((e) => e.type === "ERROR" && e.error_type === "ORPHANED_RUN")).toBe(true);
  });

  it("kills runs mid-tool and recovers every one: all COMPLETED, journals valid, janitor and crash repair recorded", async () => {
    const ws = join(root, "ws");
    const result = await runScript(SCRIPT, ["-w", ws, "-n", String(RUNS), "-k", String(KILLS), "-p", "job", "-l", join(root, "logs")], {
      cwd: root,
      env: { ...modelEnv(server.baseUrl), PATH: pathWith(binDir(root)) },
    });
    expect(result.stderr).toContain("kill -9");
    // Only the script's own lines: no bash job notice ("line 91: 4242 Killed  …") for the runs it killed.
    expect(result.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("[fan-out] "))).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`started ${RUNS}\nkilled ${KILLS}\nrecovered ${KILLS}\nwaiting 0\nlost 0\n`);

    for (let i = 1; i <= RUNS; i++) {
      const id = `job-${i}`;
      const warnings: string[] = [];
      // readJournal validates every event and the seq numbering 1, 2, 3… without gaps.
      const events = readJournal(join(runDir(ws, id), "journal.jsonl"), { warn: (line) => warnings.push(line) });
      expect(warnings).toEqual([]);
      const ends = events.filter((e): e is Extract<JournalEvent, { type: "ENGINE_END" }> => e.type === "ENGINE_END");
      expect(ends.at(-1)?.status, id).toBe("COMPLETED");
      expect(events.at(-1)?.type).toBe("ENGINE_END");
      const thoughts = events.filter((e) => e.type === "THOUGHT");
      expect(thoughts.at(-1)).toMatchObject({ content: `done ${i}` });

      const orphaned = events.findIndex((e) => e.type === "ERROR" && e.error_type === "ORPHANED_RUN");
      if (i <= KILLS) {
        // The janitor's RUNNING → INTERRUPTED transition, then the synthesized result for the cut tool call.
        expect(orphaned, id).toBeGreaterThan(0);
        expect(events[orphaned + 1]).toMatchObject({ type: "ENGINE_END", status: "INTERRUPTED" });
        const request = events.find((e) => e.type === "ACTION_REQUEST");
        const results = events.filter((e): e is Extract<JournalEvent, { type: "ACTION_RESULT" }> => e.type === "ACTION_RESULT");
        expect(results).toHaveLength(1);
        expect(results[0]).toMatchObject({
          action_id: request && "action_id" in request ? request.action_id : "missing",
          status: "ERROR",
          observation_content: expect.stringContaining("may or may not have taken effect"),
        });
        expect(results[0]!.seq).toBeGreaterThan(events[orphaned + 1]!.seq);
        expect(ends.map((e) => e.status)).toEqual(["INTERRUPTED", "COMPLETED"]);
      } else {
        expect(orphaned, id).toBe(-1);
        expect(ends.map((e) => e.status)).toEqual(["COMPLETED"]);
        expect(events.find((e) => e.type === "ACTION_RESULT")).toMatchObject({ status: "SUCCESS", observation_content: expect.stringContaining(`processed ${i}`) });
      }
    }
  });
});
