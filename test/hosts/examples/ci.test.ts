// The CI example: run-agent.sh replays a recording, maps delta's exit codes for the job, and names the run directory to upload.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { readJournal } from "../../support/journal-read.js";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

import { modelEnv, removeDir, tempDir } from "../../e2e/harness.js";
import { fault, startMockLlm } from "../../support/mock-llm.js";
import { requireBinary } from "../../support/system-packages.js";
import { EXAMPLES, binDir, pathWith, runScript } from "../../examples/helpers.js";

const CI = join(EXAMPLES, "ci");
const SCRIPT = join(CI, "run-agent.sh");

let root: string;
let path: string;

beforeAll(() => {
  requireBinary("jq"); // the scripts read RunResults with jq
  root = tempDir("delta-ci-");
  path = pathWith(binDir(root));
});
afterAll(() => removeDir(root));

/** A checkout-like workspace with a few Markdown files, and run-agent.sh run in it as the workflow does. */
async function runAgent(name: string, recording: string, extra: string[] = []) {
  const ws = join(root, name);
  mkdirSync(join(ws, "docs"), { recursive: true });
  writeFileSync(join(ws, "README.md"), "# repo\n");
  writeFileSync(join(ws, "docs/guide.md"), "# guide\n");
  const githubOutput = join(root, `${name}.github-output`);
  const result = await runScript(SCRIPT, ["-a", join(CI, "agent"), "-w", ws, "-i", `ci-${name}`, "-r", recording, "-o", join(root, `${name}.json`), "-m", "Check the docs", ...extra], {
    cwd: ws,
    env: { PATH: path, GITHUB_OUTPUT: githubOutput },
  });
  const outputs = Object.fromEntries(result.stdout.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
  return { result, outputs, ws, githubOutput };
}

function recording(name: string, lines: object[]): string {
  const file = join(root, `${name}.jsonl`);
  writeFileSync(file, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  return file;
}

describe.concurrent("examples/ci/run-agent.sh", () => {
  it("replays the shipped recording: exit 0, tools really ran, and the run directory it names is complete", async () => {
    const { result, outputs, ws, githubOutput } = await runAgent("ok", join(CI, "recording.jsonl"));
    expect(result.stderr).toContain("::notice::Run ci-ok completed");
    expect(result.exitCode).toBe(0);
    expect(outputs).toMatchObject({ run_id: "ci-ok", status: "COMPLETED", exit_code: "0", run_dir: join(ws, ".delta/ci-ok") });
    expect(readFileSync(githubOutput, "utf8")).toBe(result.stdout);
    expect(JSON.parse(readFileSync(outputs.result_file!, "utf8"))).toMatchObject({ status: "COMPLETED", result: { ok: true, docs: 12 } });
    expect(readdirSync(outputs.run_dir!)).toEqual(expect.arrayContaining(["journal.jsonl", "metadata.json", "engine.log", "io"]));
    const observation = readJournal(join(outputs.run_dir!, "journal.jsonl")).find((e) => e.type === "ACTION_RESULT");
    expect(observation).toMatchObject({ status: "SUCCESS", observation_content: "./README.md\n./docs/guide.md\n" });
  });

  it("exits 1 with the error when the run fails (a recording that runs out), still naming the run directory", async () => {
    const short = recording("short", [{ content: null, tool_calls: [{ name: "list_docs", arguments: {} }] }]);
    const { result, outputs, ws } = await runAgent("short", short);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/::error::Run ci-short failed: REPLAY_ERROR/);
    expect(outputs).toMatchObject({ status: "FAILED", exit_code: "1", run_dir: join(ws, ".delta/ci-short") });
    expect(readdirSync(outputs.run_dir!)).toContain("journal.jsonl");
  });

  it("exits 101 when the agent asks a human, which nobody can answer in CI", async () => {
    const asks = recording("asks", [{ content: null, tool_calls: [{ name: "ask_human", arguments: { prompt: "Deploy to production?" } }] }]);
    const { result, outputs } = await runAgent("asks", asks);
    expect(result.exitCode).toBe(101);
    expect(result.stderr).toContain("waiting for a human answer (Deploy to production?)");
    expect(outputs).toMatchObject({ status: "WAITING_FOR_INPUT", exit_code: "101" });
    expect(readdirSync(outputs.run_dir!)).toContain("interaction");
  });

  it("exits 75 with a warning naming the reason and the time when the run is deferred (a rate limit of an hour)", async () => {
    const server = await startMockLlm(() => fault.status(429, { retryAfter: "3600", message: "Rate limit reached for requests" }));
    try {
      const ws = join(root, "deferred");
      mkdirSync(ws, { recursive: true });
      const result = await runScript(SCRIPT, ["-a", join(CI, "agent"), "-w", ws, "-i", "ci-deferred", "-o", join(root, "deferred.json"), "-m", "Check the docs"], {
        cwd: ws,
        env: { PATH: path, ...modelEnv(server.baseUrl) },
      });
      expect(result.exitCode, result.stderr).toBe(75);
      const written = JSON.parse(readFileSync(join(root, "deferred.json"), "utf8")) as { status: string; deferred: { reason: string; resume_after: string } };
      expect(written).toMatchObject({ status: "DEFERRED", deferred: { reason: "RATE_LIMITED" } });
      expect(result.stderr).toContain(`::warning::Run ci-deferred is deferred (RATE_LIMITED until ${written.deferred.resume_after}): nothing failed`);
      expect(result.stdout).toContain("status=DEFERRED\nexit_code=75\n");
    } finally {
      await server.close();
    }
  });

  it("exits 126 when delta refuses before anything ran, and names no run directory", async () => {
    const { result, outputs } = await runAgent("refused", join(CI, "recording.jsonl"), ["-a", join(root, "no-such-agent")]);
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("::error::Refused before anything ran:");
    expect(outputs).toMatchObject({ exit_code: "126", run_dir: "" });
  });

  it("still reports a refusal when the workspace it was given was never created", async () => {
    const never = join(root, "never-made");
    const { result, outputs } = await runAgent("refused-early", join(CI, "recording.jsonl"), ["-a", join(root, "no-such-agent"), "-w", never]);
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("::error::Refused before anything ran:");
    expect(outputs).toMatchObject({ exit_code: "126", run_dir: "" });
  });
});

describe("examples/ci/delta-agent.yml", () => {
  it("runs run-agent.sh on the shipped recording, then uploads .delta/<run id> even when the run failed", () => {
    const workflow = parse(readFileSync(join(CI, "delta-agent.yml"), "utf8")) as {
      jobs: { agent: { env: Record<string, string>; steps: Array<{ id?: string; run?: string; uses?: string; if?: string; with?: Record<string, unknown> }> } };
    };
    const { env, steps } = workflow.jobs.agent;
    expect(env.RUN_ID).toContain("${{ github.run_attempt }}");
    const run = steps.find((step) => step.id === "agent")!;
    expect(run.run).toMatch(/^examples\/ci\/run-agent\.sh /);
    expect(run.run).toContain("-r examples/ci/recording.jsonl");
    expect(run.run).toContain('-i "$RUN_ID"');
    const upload = steps.find((step) => step.uses?.startsWith("actions/upload-artifact"))!;
    expect(upload.if).toBe("always()");
    expect(String(upload.with?.path)).toContain(".delta/${{ env.RUN_ID }}");
    expect(upload.with?.["include-hidden-files"]).toBe(true);
  });

  it("installs delta the way that works (a tarball from npm pack, or what DELTA_ENGINE_PACKAGE names), not from the npm registry", () => {
    const workflow = parse(readFileSync(join(CI, "delta-agent.yml"), "utf8")) as { jobs: { agent: { env: Record<string, string>; steps: Array<{ name?: string; run?: string }> } } };
    const install = workflow.jobs.agent.steps.find((step) => step.run?.includes("npm install -g"))!;
    expect(install.run).toContain('npm install -g "$DELTA_ENGINE_PACKAGE"');
    expect(install.run).not.toMatch(/npm install -g delta-engine\b/);
    expect(workflow.jobs.agent.env.DELTA_ENGINE_PACKAGE).toMatch(/delta-engine-[\d.]+\.tgz$/);
  });
});
