// The CI example's what-the-model-sees job: its script passes on the agent as recorded, fails with the diff when a prompt or a tool change alters what the model sees, and passes again once recorded anew — with no model and no key.
import { appendFileSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { setUpE2e } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith, runScript } from "./helpers.js";

const CI = join(EXAMPLES, "ci");
const SCRIPT = "check-what-the-model-sees.sh";

const { root } = setUpE2e("delta-ci-model-sees-");
let path: string;
beforeAll(() => {
  path = pathWith(binDir(root));
});

/** The example copied, as a repository that uses it would hold it, so a test may change its agent. */
function exampleCopy(name: string): string {
  const copy = join(root, name);
  cpSync(CI, copy, { recursive: true });
  return copy;
}

const check = (dir: string, args: string[] = []) => runScript(join(dir, SCRIPT), args, { cwd: dir, env: { PATH: path, TMPDIR: root } });

describe("examples/ci/check-what-the-model-sees.sh", () => {
  it("passes on the shipped agent and recorded run, with no key", async () => {
    const result = await check(CI);
    expect(result.stderr).toContain("::notice::The model sees what the recorded run showed it");
    expect(result.exitCode).toBe(0);
  });

  it("fails when the system prompt changes, and prints the change as a diff", async () => {
    const dir = exampleCopy("prompt");
    appendFileSync(join(dir, "agent", "system_prompt.md"), "3. Be thorough.\n");
    const result = await check(dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("REPLAY_DIVERGED: The request of model call 1 differs from the recording (the system prompt changed)");
    expect(result.stderr).toContain("::error::A change alters what the model sees; if it is meant, record again with");
    expect(result.stdout).toContain("The runs differ at model call 1 (iteration 1): system prompt.");
    expect(result.stdout).toContain("+3. Be thorough.");
  });

  it("fails when a tool's description changes, naming the tool", async () => {
    const dir = exampleCopy("tool");
    const agentYaml = join(dir, "agent", "agent.yaml");
    writeFileSync(agentYaml, readFileSync(agentYaml, "utf8").replace("one path per line.", "one path a line, sorted."));
    const result = await check(dir);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("(tools changed: list_docs: description changed)");
    expect(result.stdout).toContain("+list_docs: List the Markdown files of the repository, one path a line, sorted.");
  });

  it("passes again once the meant change is recorded with -u", async () => {
    const dir = exampleCopy("recorded-again");
    appendFileSync(join(dir, "agent", "system_prompt.md"), "3. Be thorough.\n");
    expect((await check(dir, ["-u"])).exitCode).toBe(0);
    const again = await check(dir);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(readFileSync(join(dir, "what-the-model-sees", "recorded", "journal.jsonl"), "utf8")).not.toEqual(readFileSync(join(CI, "what-the-model-sees", "recorded", "journal.jsonl"), "utf8"));
  });
});

describe("examples/ci/delta-agent.yml", () => {
  it("has a job that runs the check", () => {
    const workflow = parse(readFileSync(join(CI, "delta-agent.yml"), "utf8")) as { jobs: Record<string, { steps: { id?: string; run?: string }[] }> };
    const step = workflow.jobs["what-the-model-sees"]!.steps.find((candidate) => candidate.id === "what-the-model-sees");
    expect(step?.run).toBe("examples/ci/check-what-the-model-sees.sh");
  });
});
