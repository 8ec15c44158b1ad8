// The README's first command, exactly as written, in a fresh clone of the committed tree: install, build, replay hello-world.
import { execa } from "execa";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NO_MODEL_KEYS, REPO, eventTypes, readEvents, removeDir, tempDir } from "../e2e/harness.js";

let clone: string;
beforeAll(async () => {
  clone = tempDir("delta-first-command-");
  const head = (await execa("git", ["-C", REPO, "rev-parse", "HEAD"])).stdout.trim();
  await execa("git", ["clone", "--quiet", "--no-checkout", REPO, clone]);
  await execa("git", ["-C", clone, "checkout", "--quiet", head]);
});
afterAll(() => removeDir(clone));

/** The first line of the first ```sh block of the README: the command a newcomer runs first. */
function firstReadmeCommand(readme: string): string {
  const block = /^```sh\n([\s\S]*?)^```/m.exec(readme);
  if (!block?.[1]) throw new Error("README.md has no ```sh block");
  return block[1].split("\n")[0]!;
}

it("installs, builds and replays hello-world: exit 0, the result on stdout, hello.txt and the journal in W001", async () => {
  const command = firstReadmeCommand(readFileSync(join(clone, "README.md"), "utf8"));
  expect(command).toMatch(/^npm install && npx delta run --agent examples\/hello-world /);

  const run = await execa("bash", ["-c", command], { cwd: clone, env: NO_MODEL_KEYS, reject: false, timeout: 280_000, stdin: "ignore" });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stdout).toContain("Status:     COMPLETED");
  expect(run.stdout).toContain("Iterations: 3");
  expect(run.stdout).toContain("I wrote a greeting to hello.txt.");

  const agentHome = join(clone, "examples", "hello-world");
  const recorded = readFileSync(join(agentHome, "recording.jsonl"), "utf8").split("\n")[0]!;
  const written = (JSON.parse(JSON.parse(recorded).tool_calls[0].arguments) as { content: string }).content;
  const workDir = join(agentHome, "workspaces", "W001");
  expect(readFileSync(join(workDir, "hello.txt"), "utf8")).toBe(written);
  expect(written).toMatch(/^Hello, world!/);

  const runIds = readdirSync(join(workDir, ".delta")).filter((name) => name !== "VERSION");
  expect(runIds).toHaveLength(1);
  const events = readEvents(workDir, runIds[0]!);
  expect(eventTypes(events)).toEqual([
    "ENGINE_START", "USER_MESSAGE",
    "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT",
    "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT",
    "THOUGHT", "ENGINE_END",
  ]);
  expect(events[1]).toMatchObject({ type: "USER_MESSAGE", content: "Write a greeting to hello.txt and show it" });
  const results = events.filter((event) => event.type === "ACTION_RESULT");
  expect(results.map((event) => [event.tool_name, event.status, event.observation_content])).toEqual([
    ["write_file", "SUCCESS", written],
    ["show_file", "SUCCESS", written],
  ]);
  expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
}, 300_000);

it("then, in the same clone, npx delta --help, npx delta init demo -y and npx delta tool expand demo/agent.yaml work", async () => {
  const npx = (args: string[]) => execa("npx", ["--no-install", ...args], { cwd: clone, env: NO_MODEL_KEYS, reject: false, stdin: "ignore" });
  const help = await npx(["delta", "--help"]);
  expect(help.exitCode, help.stderr).toBe(0);
  expect(help.stdout).toMatch(/continue/);
  expect(help.stdout).toMatch(/list-runs/);

  const init = await npx(["delta", "init", "demo", "-y"]);
  expect(init.exitCode, init.stderr).toBe(0);
  expect(readdirSync(join(clone, "demo")).sort()).toEqual(expect.arrayContaining(["agent.yaml", "context.yaml", "system_prompt.md"]));

  const expand = await npx(["delta", "tool", "expand", "demo/agent.yaml"]);
  expect(expand.exitCode, expand.stderr).toBe(0);
  expect(expand.stdout).toMatch(/^tools:\n  - name: list_files\n/);
  expect(expand.stdout).toContain("inject_as: argument");
}, 60_000);
