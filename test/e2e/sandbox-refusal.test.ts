// A run that asks for a sandbox on a machine without bubblewrap is refused before it leaves any trace; --sandbox off runs it, and says so.
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-sandbox-refusal-");
let noBwrap: string;
beforeAll(() => {
  // A PATH that holds nothing, so bwrap is nowhere on it (the engine itself runs from process.execPath).
  noBwrap = join(root, "empty-bin");
  mkdirSync(noBwrap);
});

const AGENT_YAML = `name: boxed
llm:
  model: mock-model
sandbox: {mode: workspace-write}
tools:
  - name: mark
    exec: "touch marked.txt"
`;

describe("a machine without bubblewrap", () => {
  it("refuses a sandboxed run (126, SANDBOX_UNAVAILABLE) naming the fixes, and creates no workspace or run", async () => {
    const agent = writeAgent(join(root, "refused"), { agentYaml: AGENT_YAML });
    const before = readdirSync(agent).sort();
    const result = await delta(["run", "--agent", agent, "-m", "go", "-y", "--format", "json"], { env: { ...modelEnv("http://127.0.0.1:9/v1"), PATH: noBwrap } });
    expect(result.exitCode).toBe(126);
    const outcome = JSON.parse(result.stdout) as { status: string; error: { type: string; message: string } };
    // The RunResult of every refusal (exit 126) carries status REFUSED and the error's type.
    expect(outcome.status).toBe("REFUSED");
    expect(outcome.error.type).toBe("SANDBOX_UNAVAILABLE");
    expect(outcome.error.message).toContain("bubblewrap (bwrap) is not on PATH");
    expect(outcome.error.message).toContain("apt-get install bubblewrap");
    expect(outcome.error.message).toContain("--sandbox off");
    expect(readdirSync(agent).sort()).toEqual(before);
  });

  it("runs the same agent unboxed with --sandbox off (no bwrap is looked for), warning that it does", async () => {
    const agent = writeAgent(join(root, "off"), { agentYaml: AGENT_YAML });
    const server = await startMockLlm([reply.toolCalls([{ name: "mark", arguments: {} }]), reply.text("done")]);
    try {
      const result = await delta(["run", "--agent", agent, "-m", "go", "-y", "--sandbox", "off"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain("--sandbox off:");
      expect(result.stderr).toContain("run unboxed");
      expect(existsSync(join(agent, "workspaces", "W001", "marked.txt")), result.stderr).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("refuses a --sandbox mode that does not exist", async () => {
    const agent = writeAgent(join(root, "bad-mode"), { agentYaml: AGENT_YAML });
    const result = await delta(["run", "--agent", agent, "-m", "go", "-y", "--sandbox", "strict"]);
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("--sandbox is one of read-only, workspace-write, off");
  });

  it("delta init writes the sandbox commented out, with the reason", async () => {
    const made = await delta(["init", "demo"], { cwd: root, env: { PATH: noBwrap } });
    expect(made.exitCode, made.stderr).toBe(0);
    const yaml = readFileSync(join(root, "demo", "agent.yaml"), "utf8");
    expect(yaml).toContain("# This machine cannot box tools (bubblewrap (bwrap) is not on PATH).");
    expect(yaml).toContain("\n# sandbox: {mode: workspace-write}\n");
    expect(yaml).not.toMatch(/^sandbox:/m);
    expect(made.stderr).toContain("The tools run unboxed");
  });
});
