// metadata.json is a cache of the journal: lost or garbled, it is rebuilt with a warning and the run continues.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, readMetadataFile, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-metadata-");
let agent: string;
let server: MockLlm;
beforeAll(async () => {
  agent = writeAgent(root);
  server = await serve((request) => (toolResultsOf(request).length > 0 ? reply.text("done") : reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }])));
});

const DAMAGE: Record<string, (file: string) => void> = {
  deleted: (file) => rmSync(file),
  "not JSON": (file) => writeFileSync(file, '{"run_id": "cut off'),
  "missing a field": (file) => {
    const { status: _status, ...rest } = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify(rest));
  },
};

describe("a lost or garbled metadata.json", () => {
  for (const [damage, apply] of Object.entries(DAMAGE)) {
    it(`(${damage}) is rebuilt from the journal with a warning, and the run continues`, async () => {
      const ws = join(root, damage.replace(/\W+/g, "-"));
      const id = "m1";
      expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", id, "-m", "the task", "--max-iterations", "1"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(1);
      const before = readMetadataFile(ws, id);
      apply(join(runDir(ws, id), "metadata.json"));

      const resumed = await delta(["continue", "--run-id", id, "-w", ws, "-m", "go on", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(resumed.stderr).toMatch(/\[warning\] .*metadata\.json.*Rebuilt it from the journal/s);
      expect(resumed.exitCode).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "done" });
      expect(readMetadataFile(ws, id)).toMatchObject({
        run_id: id,
        status: "COMPLETED",
        initial_message: "the task",
        created_at: readEvents(ws, id)[0]!.timestamp,
        agent_name: before.agent_name,
        work_dir: before.work_dir,
        iterations: 2,
      });
    });
  }
});
