// A failed run in --format json still tells the person at the terminal why, on stderr, while stdout stays one JSON object.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { delta, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e();
let agent: string;
let recording: string;
beforeAll(() => {
  agent = writeAgent(root);
  recording = join(root, "one.jsonl");
  writeFileSync(recording, `${JSON.stringify({ tool_calls: [{ name: "echo", arguments: { text: "hi" } }] })}\n`);
});

describe.concurrent("failure message on stderr", () => {
  for (const format of ["json", "raw"]) {
    it(`--format ${format}`, async () => {
      const run = await delta(["run", "--agent", agent, "-w", join(root, format), "--format", format, "--replay", recording, "-m", "go"]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain(`REPLAY_ERROR: No recorded reply for model call 2: recording exhausted after 1 reply (file ${recording}).`);
      if (format === "json") expect(JSON.parse(run.stdout)).toMatchObject({ status: "FAILED", error: { type: "REPLAY_ERROR" } });
      else expect(run.stdout).toBe("");
    });
  }
});
