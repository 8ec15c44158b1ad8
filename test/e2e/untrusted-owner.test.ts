// End to end, as two real users: a run folder, journal or hooks file another user owns is refused, unless DELTA_TRUSTED_OWNERS names that user.
import { execFileSync } from "node:child_process";
import { execa } from "execa";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomHex } from "../../src/random-hex.js";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { copyOfDelta, delta, modelEnv, runDir, setUpE2e, writeAgent } from "./harness.js";

const suffix = randomHex(3);
/** The member who plants a run, and the member whose continue must not run it. */
const PLANTER = `dplant${suffix}`;
const VICTIM = `dvictim${suffix}`;

const { root, serve } = setUpE2e("delta-owner-");
let server: MockLlm;
/** The delta the other users run: a copy they can read wherever the clone lives (a clone in a 0700 home is out of their reach). */
let theirDelta: string;

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error("this test creates two users with useradd: run it as root (CI does)");
  for (const user of [PLANTER, VICTIM]) execFileSync("useradd", ["--no-create-home", "--shell", "/bin/sh", user]);
  chmodSync(root, 0o777);
  theirDelta = copyOfDelta(join(root, "delta"));
  server = await serve(() => reply.text("answer"));
});
afterAll(() => {
  for (const user of [PLANTER, VICTIM]) execFileSync("userdel", [user], { stdio: "ignore" });
});

/** `delta continue` run as `user` (setpriv: no password, no login shell); asynchronous, so the mock model in this process can answer. */
async function continueAs(user: string, args: string[], env: Record<string, string> = {}): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const result = await execa("setpriv", ["--reuid", user, "--regid", user, "--init-groups", "--", process.execPath, theirDelta, "continue", ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, ...modelEnv(server.baseUrl), ...env },
    extendEnv: false,
    stdin: "ignore",
    reject: false,
    timeout: 30_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

describe("a run another user owns", () => {
  it("is refused before its hook runs as the caller, and continues once DELTA_TRUSTED_OWNERS names its owner", async () => {
    const agent = writeAgent(root, { hooksYaml: JSON.stringify({ pre_llm_request: { command: ["sh", "-c", "id -un >> ran-as.txt"] } }) }, "agent");
    const ws = join(root, "ws");
    const made = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "shared", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(made.exitCode, made.stderr).toBe(0);
    // The planter owns the agent and the run, and leaves them writable to the group (here: everyone).
    execFileSync("chown", ["-R", `${PLANTER}:${PLANTER}`, agent, ws]);
    execFileSync("chmod", ["-R", "a+rwX", agent, ws]);
    execFileSync("rm", ["-f", join(ws, "ran-as.txt")]);

    const refused = await continueAs(VICTIM, ["--run-id", "shared", "-w", ws, "-m", "more"]);
    expect(refused.exitCode, refused.stderr).toBe(126);
    expect(refused.stderr).toContain(runDir(ws, "shared"));
    expect(refused.stderr).toContain(`belongs to ${PLANTER}`);
    expect(refused.stderr).toContain(`DELTA_TRUSTED_OWNERS=${PLANTER}`);
    expect(existsSync(join(ws, "ran-as.txt"))).toBe(false);

    const trusted = await continueAs(VICTIM, ["--run-id", "shared", "-w", ws, "-m", "more"], { DELTA_TRUSTED_OWNERS: PLANTER });
    expect(trusted.exitCode, `${trusted.stderr}\n${trusted.stdout}`).toBe(0);
    expect(readFileSync(join(ws, "ran-as.txt"), "utf8").trim()).toBe(VICTIM);
  }, 60_000);

  it("refuses an agent whose hooks file another user owns", async () => {
    const agent = writeAgent(root, { hooksYaml: JSON.stringify({ pre_llm_request: { command: ["sh", "-c", "true"] } }) }, "agent-hooks");
    const ws = join(root, "ws-hooks");
    const made = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "mine", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(made.exitCode, made.stderr).toBe(0);
    execFileSync("chown", ["-R", `${VICTIM}:${VICTIM}`, ws, agent]);
    execFileSync("chown", [`${PLANTER}:${PLANTER}`, join(agent, "hooks.yaml")]);
    const refused = await continueAs(VICTIM, ["--run-id", "mine", "-w", ws, "-m", "more"]);
    expect(refused.exitCode, refused.stderr).toBe(126);
    expect(refused.stderr).toContain(join(agent, "hooks.yaml"));
  }, 60_000);
});
