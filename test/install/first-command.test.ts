// The README's first commands, exactly as written, in a fresh clone of the committed tree: install, build, replay hello-world, look at the run — and the clone stays clean.
// In the install project (npm run test:install), beside the global installs: it installs every dependency, from npm's cache or registry.
import { execa } from "execa";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { NO_MODEL_KEYS, REPO, eventTypes, readEvents, setUpE2e } from "../e2e/harness.js";

const { root } = setUpE2e("delta-first-command-");
const clone = join(root, "clone");
/** The run index of the newcomer these commands are typed by: theirs alone, so `show --last` finds their run. */
const state = join(root, "state");
beforeAll(async () => {
  mkdirSync(state);
  const head = (await execa("git", ["-C", REPO, "rev-parse", "HEAD"])).stdout.trim();
  await execa("git", ["clone", "--quiet", "--no-checkout", REPO, clone]);
  await execa("git", ["-C", clone, "checkout", "--quiet", head]);
});

/** The README's ```sh blocks, in order. */
function readmeBlocks(readme: string): string[] {
  return [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((block) => block[1]!);
}

/** The first line of the first ```sh block of the README: the command a newcomer runs first. */
function firstReadmeCommand(readme: string): string {
  const block = readmeBlocks(readme)[0];
  if (!block) throw new Error("README.md has no ```sh block");
  return block.split("\n")[0]!;
}

/** What `git status --porcelain` says of a clone: empty when nothing was changed or left untracked. */
async function porcelain(dir: string): Promise<string> {
  return (await execa("git", ["-C", dir, "status", "--porcelain"])).stdout;
}

it("installs, builds and replays hello-world: exit 0, the result on stdout, hello.txt and the journal in W001", async () => {
  const command = firstReadmeCommand(readFileSync(join(clone, "README.md"), "utf8"));
  // As a user of codex exec or claude -p types it: the agent, then the task as the last argument.
  expect(command).toMatch(/^npm install && npx delta run --agent examples\/hello-world .* "Write a greeting to hello.txt and show it"$/);
  expect(command).not.toContain(" -m ");

  // npm takes a package from its cache when it has it, rather than asking the registry whether it changed: the same install, without a
  // registry round trip per package (on a machine whose cache is empty, it downloads them as a newcomer's npm does).
  const npmConfig = { npm_config_prefer_offline: "true" };
  const run = await execa("bash", ["-c", command], { cwd: clone, env: { ...NO_MODEL_KEYS, ...npmConfig, XDG_STATE_HOME: state }, reject: false, timeout: 280_000, stdin: "ignore" });
  expect(run.exitCode, run.stderr).toBe(0);
  // npm install says nothing a newcomer must puzzle over: no peer-dependency or install-script warnings.
  expect(run.stderr.split("\n").filter((line) => /^npm warn/i.test(line))).toEqual([]);
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
  expect(await porcelain(clone)).toBe("");
}, 300_000);

it("then the README's commands that look at the run (show, report) work and leave the clone clean", async () => {
  const commands = readmeBlocks(readFileSync(join(clone, "README.md"), "utf8"))[1]!.split("\n").filter((line) => line.startsWith("npx delta "));
  expect(commands.map((line) => line.split(" ")[2])).toEqual(["show", "report"]);
  const tmp = join(root, "report-tmp");
  mkdirSync(tmp);
  for (const command of commands) {
    const run = await execa("bash", ["-c", command], { cwd: clone, env: { ...NO_MODEL_KEYS, TMPDIR: tmp, XDG_STATE_HOME: state }, reject: false, stdin: "ignore" });
    expect(run.exitCode, `${command}\n${run.stderr}`).toBe(0);
    if (command.includes(" show ")) expect(run.stdout).toContain("Write a greeting to hello.txt and show it");
  }
  expect(readFileSync(join(tmp, "run.html"), "utf8")).toMatch(/^<!doctype html>/);
  expect(await porcelain(clone)).toBe("");
}, 60_000);

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
