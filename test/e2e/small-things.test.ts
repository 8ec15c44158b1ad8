// End to end: the small things people notice: the workspace prompt on a terminal, --help and --version, and what tool expand shows.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CRASH_TRACE, DELTA_BIN, NO_MODEL_KEYS, REPO, delta, removeDir, tempDir, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e();
let replies: string;

beforeAll(() => {
  replies = join(root, "replies.jsonl");
  writeFileSync(replies, '{"content": "ok"}\n');
});

/** An agent that has run once, so LAST_USED names W001 and `delta run` on a terminal offers it. */
async function agentWithLastUsed(name: string): Promise<string> {
  const agent = writeAgent(root, {}, name);
  const first = await delta(["run", "--agent", agent, "-y", "-m", "x", "--replay", replies]);
  expect(first.exitCode, first.stderr).toBe(0);
  return agent;
}

/** Runs `shellCommand` on a pseudo-terminal (util-linux `script`), feeding `input` to it as typed keys. */
function onTerminal(shellCommand: string, input?: string) {
  return execa("script", ["-qec", shellCommand, "/dev/null"], {
    env: { ...NO_MODEL_KEYS },
    reject: false,
    timeout: 20_000,
    ...(input === undefined ? { stdin: "pipe" as const } : { input }),
  });
}

const deltaCommand = (args: string[]): string => [process.execPath, DELTA_BIN, ...args].map((word) => `'${word}'`).join(" ");

describe("the workspace prompt", () => {
  it("refuses cleanly on EOF (Ctrl-D), with no stack trace and nothing created", async () => {
    const agent = await agentWithLastUsed("agent-eof");
    const result = await onTerminal(deltaCommand(["run", "--agent", agent, "-m", "x", "--replay", replies]), "\u0004");
    expect(result.stdout).toContain("Choose a workspace");
    expect(result.exitCode).toBe(126);
    expect(result.stdout).toContain("Pass -y for a new workspace, or -w <dir>");
    expect(result.stdout).not.toMatch(CRASH_TRACE);
    expect(readFileSync(join(agent, "workspaces", "LAST_USED"), "utf8")).toBe("W001\n");
    expect(existsSync(join(agent, "workspaces", "W002"))).toBe(false);
  });

  it("is not shown when stdout is not a terminal: a new workspace is made, nothing waits for the keyboard", async () => {
    const agent = await agentWithLastUsed("agent-piped");
    const out = join(root, "piped-out.txt");
    // stdin and stderr are the terminal, stdout a file; the terminal's input is never closed.
    const result = await onTerminal(`${deltaCommand(["run", "--agent", agent, "-m", "x", "--replay", replies, "--format", "raw"])} > '${out}'`);
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).not.toContain("Choose a workspace");
    expect(readFileSync(out, "utf8")).toBe("ok\n");
    expect(readFileSync(join(agent, "workspaces", "LAST_USED"), "utf8")).toBe("W002\n");
  });
});

describe("help and version", () => {
  it("delta tool expand --help explains the command instead of failing", async () => {
    const result = await delta(["tool", "expand", "--help"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("delta tool expand <agent dir | agent.yaml>");
    expect(result.stderr).toBe("");
  });

  it("delta init --help lists the templates and creates nothing", async () => {
    const cwd = tempDir();
    try {
      const result = await delta(["init", "--help"], { cwd });
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/Templates:\n\s+hello-world\n\s+minimal/);
      expect(existsSync(join(cwd, "undefined"))).toBe(false);
    } finally {
      removeDir(cwd);
    }
  });

  it("delta-sessions --version prints the version", async () => {
    const result = await execa(process.execPath, [join(REPO, "bin/delta-sessions.js"), "--version"], { reject: false });
    expect(result.exitCode).toBe(0);
    const version = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version as string;
    expect(result.stdout).toContain(`delta-sessions/${version}`);
  });
});

describe("delta tool expand", () => {
  it("shows required: false where the model is told a parameter is optional (it has a default)", async () => {
    const agent = writeAgent(root, { tools: 'tools:\n  - name: grep_file\n    exec: "grep ${pattern} ${file}"\n    parameters:\n      - name: file\n        default: ./data.txt\n' }, "agent-expand");
    const result = await delta(["tool", "expand", join(agent, "agent.yaml")]);
    expect(result.exitCode, result.stderr).toBe(0);
    const parameters = (parse(result.stdout) as { tools: { parameters: { name: string; required: boolean }[] }[] }).tools[0]!.parameters;
    expect(parameters.map((parameter) => [parameter.name, parameter.required])).toEqual([["pattern", true], ["file", false]]);
  });
});
