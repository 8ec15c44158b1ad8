import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EngineError, RunRefusedError } from "../../src/errors.js";
import { findRunDir, runPaths, stageNewRunDir, stageRunDir } from "../../src/store/run-dir.js";
import { bundleScript } from "../support/script-bundle.js";
import { parseRunId } from "../../src/store/run-id.js";

let workDir: string;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "store-"));
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

describe("runPaths", () => {
  it("places every file of a run under .delta/<run id> without touching the disk", () => {
    const paths = runPaths(workDir, parseRunId("r1"));
    expect(paths.runDir).toBe(join(workDir, ".delta", "r1"));
    expect(paths.journal).toBe(join(paths.runDir, "journal.jsonl"));
    expect(paths.toolExecutionsDir).toBe(join(paths.runDir, "io", "tool_executions"));
    expect(existsSync(join(workDir, ".delta"))).toBe(false);
  });

  it("refuses an id that could leave the workspace", () => {
    expect(() => runPaths(workDir, parseRunId("../escape"))).toThrow(RunRefusedError);
  });
});

describe("stageRunDir + publish", () => {
  it("creates the run directory, its io folders and .delta/VERSION", () => {
    const paths = stageRunDir(workDir, parseRunId("r1")).publish();
    for (const dir of [paths.runDir, paths.invocationsDir, paths.toolExecutionsDir, paths.hooksDir]) {
      expect(statSync(dir).isDirectory()).toBe(true);
    }
    expect(existsSync(paths.interactionDir)).toBe(false);
    expect(readFileSync(join(workDir, ".delta", "VERSION"), "utf8")).toBe("1\n");
  });

  it("refuses a second claim of the same id and points at continue", () => {
    stageRunDir(workDir, parseRunId("r1")).publish();
    expect(() => stageRunDir(workDir, parseRunId("r1")).publish()).toThrow(RunRefusedError);
    expect(() => stageRunDir(workDir, parseRunId("r1")).publish()).toThrow(`run id r1 already exists in ${workDir}; choose another id or use \`delta continue --run-id r1\``);
  });

  it("refuses a workspace whose layout version it does not understand", () => {
    stageRunDir(workDir, parseRunId("r1")).publish();
    writeFileSync(join(workDir, ".delta", "VERSION"), "7\n");
    expect(() => stageRunDir(workDir, parseRunId("r2")).publish()).toThrow(EngineError);
    expect(() => stageRunDir(workDir, parseRunId("r2")).publish()).toThrow(/layout version "7"/);
    expect(existsSync(join(workDir, ".delta", "r2"))).toBe(false);
  });

  it("lets exactly one of many concurrent processes claim the same id", async () => {
    const script = await bundleScript(
      join(workDir, "claim.cjs"),
      `import { stageRunDir } from ${JSON.stringify(resolve("src/store/run-dir.ts"))};
        import { parseRunId } from ${JSON.stringify(resolve("src/store/run-id.ts"))};
        try { stageRunDir(process.argv[2], parseRunId("shared")).publish(); console.log("won"); }
        catch (err) { console.log(err.constructor.name); }`,
    );
    const target = join(workDir, "ws");
    const runs = Array.from({ length: 6 }, () => promisify(execFile)(process.execPath, [script, target]));
    const outputs = (await Promise.all(runs)).map((result) => result.stdout.trim()).sort();
    expect(outputs).toEqual(["RunRefusedError", "RunRefusedError", "RunRefusedError", "RunRefusedError", "RunRefusedError", "won"]);
    expect(readFileSync(join(target, ".delta", "VERSION"), "utf8")).toBe("1\n");
  });
});

describe("stageNewRunDir", () => {
  it("claims a generated id", () => {
    const staged = stageNewRunDir(workDir);
    const paths = staged.publish();
    expect(staged.runId).toMatch(/^\d{8}_\d{6}_[0-9a-f]{6}$/);
    expect(statSync(paths.runDir).isDirectory()).toBe(true);
  });
});

describe("findRunDir", () => {
  it("finds a claimed run", () => {
    const claimed = stageRunDir(workDir, parseRunId("r1")).publish();
    expect(findRunDir(workDir, parseRunId("r1"))).toEqual(claimed);
  });

  it("refuses an unknown run and says how to list runs", () => {
    expect(() => findRunDir(workDir, parseRunId("nope"))).toThrow(RunRefusedError);
    expect(() => findRunDir(workDir, parseRunId("nope"))).toThrow(`no run nope in ${workDir}; list the runs there with \`delta list-runs -w ${workDir}\``);
  });
});
