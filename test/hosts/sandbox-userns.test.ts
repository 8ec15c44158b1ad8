// A machine where user namespaces are really denied: a sandboxed run is refused before it leaves any trace, naming the cause and the fixes.
// It needs bubblewrap itself (without it the refusal is "bwrap is not on PATH", which the unit project tests), hence the host project.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELTA_BIN, NO_MODEL_KEYS, modelEnv, removeDir, tempDir, writeAgent } from "../e2e/harness.js";
import { requireBinary } from "../support/system-packages.js";

let root: string;
beforeAll(() => {
  requireBinary("bwrap");
  requireBinary("unshare");
  root = tempDir("delta-sandbox-userns-");
});
afterAll(() => removeDir(root));

/**
 * Runs delta in a user namespace of its own where user.max_user_namespaces is 0: the kernel then
 * refuses every new user namespace, as in containers that deny them.
 */
function deltaWithoutUserNamespaces(args: string[]) {
  const script = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"';
  return execa("unshare", ["--user", "--map-root-user", "sh", "-c", script, "sh", process.execPath, DELTA_BIN, ...args], {
    env: { ...NO_MODEL_KEYS, ...modelEnv("http://127.0.0.1:9/v1") },
    reject: false,
    timeout: 30_000,
  });
}

describe("user namespaces denied", () => {
  it("refuses a sandboxed run with 126, naming the namespaces and the fixes, and creates nothing", async () => {
    const agent = writeAgent(join(root, "agent"), {
      agentYaml: "name: boxed\nllm:\n  model: mock-model\nsandbox: {mode: workspace-write}\ntools:\n  - name: mark\n    exec: \"touch marked.txt\"\n",
    });
    const before = readdirSync(agent).sort();
    const result = await deltaWithoutUserNamespaces(["run", "--agent", agent, "-m", "go", "-y", "--format", "json"]);
    expect(result.exitCode, String(result.stderr)).toBe(126);
    const outcome = JSON.parse(String(result.stdout)) as { error: { type: string; message: string } };
    expect(outcome.error.type).toBe("SANDBOX_UNAVAILABLE");
    expect(outcome.error.message).toContain("user namespaces are probably not allowed here");
    expect(outcome.error.message).toContain("max_user_namespaces");
    expect(outcome.error.message).toContain("--sandbox off");
    expect(readdirSync(agent).sort()).toEqual(before);
  });

  it("delta init writes the sandbox commented out there, naming the cause", async () => {
    const result = await deltaWithoutUserNamespaces(["init", join(root, "demo")]);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const yaml = readFileSync(join(root, "demo", "agent.yaml"), "utf8");
    expect(yaml).toMatch(/^# This machine cannot box tools \(bwrap cannot create the namespaces/m);
    expect(yaml).toContain("\n# sandbox: {mode: workspace-write}\n");
  });
});

describe("user namespaces allowed", () => {
  it("delta init writes sandbox: {mode: workspace-write}, and the agent's tools list shows it", async () => {
    const made = await execa(process.execPath, [DELTA_BIN, "init", join(root, "boxed-demo")], { reject: false });
    expect(made.exitCode, String(made.stderr)).toBe(0);
    expect(readFileSync(join(root, "boxed-demo", "agent.yaml"), "utf8")).toMatch(/^sandbox: \{mode: workspace-write\}$/m);
    const list = await execa(process.execPath, [DELTA_BIN, "tool", "list", join(root, "boxed-demo")], { reject: false });
    expect(String(list.stdout)).toMatch(/^list_files\s+exec\s+sandbox: workspace-write, no network\s/m);
  });
});
