// The example scripts' --help: their usage comment, and never a line of their own code.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { setUpE2e } from "../e2e/harness.js";
import { EXAMPLES, runScript } from "./helpers.js";

const { root } = setUpE2e("delta-script-help-");
const SCRIPTS = ["slurm/slurm-map.sh", "map-reduce/map-reduce.sh", "ci/run-agent.sh", "ci/check-what-the-model-sees.sh", "crash-recovery/fan-out-and-recover.sh"];

describe("example scripts' --help", () => {
  for (const script of SCRIPTS) {
    it(`${script} prints its usage comment and no line of code`, async () => {
      const path = join(EXAMPLES, script);
      const comments = new Set(readFileSync(path, "utf8").split("\n").filter((line) => line.startsWith("#")).map((line) => line.replace(/^# ?/, "")));
      const { stdout, stderr } = await runScript(path, ["--help"], { cwd: root, env: {} });
      const printed = `${stdout}${stderr}`.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("error:") && !/illegal option/.test(line));
      expect(printed.length).toBeGreaterThan(2);
      expect(printed.filter((line) => !comments.has(line))).toEqual([]);
    });
  }
});
