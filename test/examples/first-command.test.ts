// The README's first commands, exactly as written, in a fresh clone of the committed tree: install, build, replay hello-world, look at the run — and the clone stays clean;
// then the documented installs from that clone: npm pack + npm install -g of the tarball, and npm install -g . ; delta and delta-sessions then run from PATH.
import { execa } from "execa";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
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

  const run = await execa("bash", ["-c", command], { cwd: clone, env: { ...NO_MODEL_KEYS, XDG_STATE_HOME: state }, reject: false, timeout: 280_000, stdin: "ignore" });
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

it("then, from the same installed clone, npm pack and npm install -g: delta and delta-sessions are on PATH and ship their schemas and templates", async () => {
  const prefix = join(root, "prefix");
  const npm = (args: string[], cwd: string) => execa("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], { cwd, env: NO_MODEL_KEYS, stdin: "ignore" });
  const packed = await npm(["pack", "--pack-destination", root], clone);
  const tarball = join(root, packed.stdout.trim().split("\n").at(-1)!);
  expect(existsSync(tarball)).toBe(true);
  await npm(["install", "--global", "--prefix", prefix, tarball], root);

  // From PATH, as a user types them, in a directory that is not the clone.
  const env = { ...NO_MODEL_KEYS, PATH: [join(prefix, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(":") };
  const version = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version as string;
  const deltaVersion = await execa("delta", ["--version"], { cwd: root, env, extendEnv: false });
  expect(deltaVersion.stdout).toMatch(new RegExp(`^delta/${version.replace(/\./g, "\\.")} `));
  const sessionsVersion = await execa("delta-sessions", ["--version"], { cwd: root, env, extendEnv: false });
  expect(sessionsVersion.stdout).toMatch(new RegExp(`^delta-sessions/${version.replace(/\./g, "\\.")} `));

  const installed = join(prefix, "lib", "node_modules", "delta-engine");
  expect(readdirSync(join(installed, "schemas")).sort()).toEqual(["agent.schema.json", "context.schema.json", "hooks.schema.json", "run-result.schema.json"]);
  const schema = await execa("delta", ["schema", "agent"], { cwd: root, env, extendEnv: false });
  expect(JSON.parse(schema.stdout)).toMatchObject({ title: "Delta Engine agent.yaml" });
  const init = await execa("delta", ["init", "new-agent", "-y"], { cwd: root, env, extendEnv: false });
  expect(init.exitCode).toBe(0);
  const modeline = readFileSync(join(root, "new-agent", "agent.yaml"), "utf8").split("\n")[0]!;
  expect(resolve(join(root, "new-agent"), modeline.replace("# yaml-language-server: $schema=", ""))).toBe(join(installed, "schemas", "agent.schema.json"));

  // The other documented way, from the clone itself: npm install -g . links the built clone.
  const linked = join(root, "linked");
  await npm(["install", "--global", "--prefix", linked, "."], clone);
  const linkedEnv = { ...env, PATH: [join(linked, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(":") };
  expect((await execa("delta", ["--version"], { cwd: root, env: linkedEnv, extendEnv: false })).stdout).toMatch(/^delta\//);
  expect((await execa("delta-sessions", ["--version"], { cwd: root, env: linkedEnv, extendEnv: false })).stdout).toMatch(/^delta-sessions\//);
}, 180_000);
