// The documented global installs from a fresh clone of the committed tree: npm pack + npm install -g of the tarball, and npm install -g . ; delta and delta-sessions then run from PATH.
import { execa } from "execa";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { NO_MODEL_KEYS, REPO, setUpE2e } from "../e2e/harness.js";

const { root } = setUpE2e("delta-global-install-");
const clone = join(root, "clone");
const npm = (args: string[], cwd: string) => execa("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], { cwd, env: NO_MODEL_KEYS, stdin: "ignore" });

beforeAll(async () => {
  const head = (await execa("git", ["-C", REPO, "rev-parse", "HEAD"])).stdout.trim();
  await execa("git", ["clone", "--quiet", "--no-checkout", REPO, clone]);
  await execa("git", ["-C", clone, "checkout", "--quiet", head]);
  // What the README's first command does before it runs delta: install, which builds dist/.
  await npm(["install"], clone);
}, 300_000);

it("npm pack and npm install -g: delta and delta-sessions are on PATH and ship their schemas and templates", async () => {
  const prefix = join(root, "prefix");
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
}, 180_000);

it("npm install -g . from the clone links the built clone: delta and delta-sessions run from PATH", async () => {
  const linked = join(root, "linked");
  await npm(["install", "--global", "--prefix", linked, "."], clone);
  const env = { ...NO_MODEL_KEYS, PATH: [join(linked, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(":") };
  expect((await execa("delta", ["--version"], { cwd: root, env, extendEnv: false })).stdout).toMatch(/^delta\//);
  expect((await execa("delta-sessions", ["--version"], { cwd: root, env, extendEnv: false })).stdout).toMatch(/^delta-sessions\//);
}, 120_000);
