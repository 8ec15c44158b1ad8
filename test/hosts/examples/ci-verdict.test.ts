// The CI example's structured answer: the workflow's review step and its jq gate, run as GitHub runs them (bash -e), on a recording that passes and on ones that fail.
import { execa } from "execa";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { NO_MODEL_KEYS, REPO, removeDir, tempDir } from "../../e2e/harness.js";
import { EXAMPLES, binDir, pathWith } from "../../examples/helpers.js";
import { requireBinary } from "../../support/system-packages.js";

const CI = join(EXAMPLES, "ci");
const RECORDING = "examples/ci/review-recording.jsonl";

interface Step {
  id?: string;
  name?: string;
  run?: string;
}

const steps = (parse(readFileSync(join(CI, "delta-agent.yml"), "utf8")) as { jobs: { agent: { steps: Step[] } } }).jobs.agent.steps;
const reviewStep = steps.find((step) => step.id === "review")!;
const gateStep = steps.find((step) => step.name === "Gate on the verdict")!;

let root: string;
let path: string;
beforeAll(() => {
  requireBinary("jq");
  root = tempDir("delta-ci-verdict-");
  path = pathWith(binDir(root));
});
afterAll(() => removeDir(root));

/** One workflow step's script, with the job's variables, in the checkout (this repository) as GitHub runs it. */
async function runStep(script: string, env: Record<string, string>) {
  const result = await execa("bash", ["-e", "-c", script], { cwd: REPO, env: { ...NO_MODEL_KEYS, PATH: path, ...env }, extendEnv: true, stdin: "ignore", reject: false, stripFinalNewline: false, timeout: 60_000 });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The review and the gate in a workspace with these Markdown files, the model replayed from `recording`. */
async function reviewAndGate(name: string, docs: Record<string, string>, recording: string = RECORDING) {
  const ws = join(root, name);
  const temp = join(root, `${name}-runner-temp`);
  mkdirSync(ws, { recursive: true });
  mkdirSync(temp, { recursive: true });
  for (const [file, text] of Object.entries(docs)) writeFileSync(join(ws, file), text);
  const env = { GITHUB_WORKSPACE: ws, RUNNER_TEMP: temp, RUN_ID: `ci-${name}` };
  const review = await runStep(reviewStep.run!.replace(RECORDING, recording), env);
  const gate = review.exitCode === 0 ? await runStep(gateStep.run!, env) : null;
  return { review, gate, verdictFile: join(temp, "verdict.json"), ws };
}

function recording(name: string, verdict: unknown): string {
  const file = join(root, `${name}.jsonl`);
  const lines = [{ content: null, tool_calls: [{ name: "untitled_docs", arguments: {} }] }, { content: typeof verdict === "string" ? verdict : JSON.stringify(verdict) }];
  writeFileSync(file, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  return file;
}

describe("examples/ci: the reviewer's JSON verdict, read with jq", () => {
  it("the shipped recording passes: the verdict is one compact JSON line, and the gate exits 0", async () => {
    const { review, gate, verdictFile, ws } = await reviewAndGate("pass", { "README.md": "# repo\n" });
    expect(review.exitCode, review.stderr).toBe(0);
    expect(review.stdout).toBe('{"verdict":"pass","findings":[]}\n');
    expect(readFileSync(verdictFile, "utf8")).toBe(review.stdout);
    expect(gate).toMatchObject({ exitCode: 0, stdout: "" });
    // The reviewer's tool really ran in the workspace.
    expect(readFileSync(join(ws, ".delta", "ci-pass-review", "journal.jsonl"), "utf8")).toContain('"tool_name":"untitled_docs"');
  });

  it("a fail verdict fails the job at the gate, each finding an ::error annotation naming its file", async () => {
    const failing = recording("fail", { verdict: "fail", findings: [{ file: "notes.md", problem: "no title on the first line" }] });
    const { review, gate } = await reviewAndGate("fail", { "README.md": "# repo\n", "notes.md": "notes\n" }, failing);
    expect(review.exitCode, review.stderr).toBe(0);
    expect(gate?.exitCode).toBe(1);
    expect(gate?.stdout).toBe("::error file=notes.md::no title on the first line\n");
  });

  it("an answer that is not a verdict never reaches the gate: the review step fails with OUTPUT_INVALID", async () => {
    const prose = join(root, "prose.jsonl");
    writeFileSync(prose, [{ content: null, tool_calls: [{ name: "untitled_docs", arguments: {} }] }, { content: "Looks good to me!" }, { content: '{"verdict": "ok"}' }].map((line) => JSON.stringify(line)).join("\n") + "\n");
    const { review, gate } = await reviewAndGate("prose", { "README.md": "# repo\n" }, prose);
    expect(review.exitCode).toBe(1);
    expect(review.stderr).toContain("OUTPUT_INVALID: The model's final answer still does not match the output schema (verdict.schema.json)");
    expect(review.stdout).toBe("");
    expect(gate).toBeNull();
  });
});
