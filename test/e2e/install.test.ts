// The documented installs, on a fresh clone: npm ci, then npm pack + npm install -g of the tarball, and npm install -g . ; delta and delta-sessions then run from PATH.
import { execa } from "execa";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
import { NO_MODEL_KEYS, REPO, removeDir, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-install-");
// Two global installs' node_modules: removing them can take a while on a busy machine.
afterAll(() => removeDir(root), 120_000);

it("installs from a clone through npm pack and npm install -g: delta and delta-sessions are on PATH and ship their schemas and templates", async () => {
  const clone = join(root, "clone");
  const prefix = join(root, "prefix");
  const head = (await execa("git", ["-C", REPO, "rev-parse", "HEAD"])).stdout.trim();
  await execa("git", ["clone", "--quiet", "--no-checkout", REPO, clone]);
  await execa("git", ["-C", clone, "checkout", "--quiet", head]);

  const npm = (args: string[], cwd: string) => execa("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], { cwd, env: NO_MODEL_KEYS, stdin: "ignore" });
  await npm(["ci"], clone);
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
