import { execa } from "execa";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadAgent } from "../../src/agent/load.js";
import { init } from "../../src/cli/commands/init.js";
import { findTemplatesDir } from "../../src/cli/templates.js";
import { toolExpand } from "../../src/cli/commands/tool-expand.js";
import type { CliIo } from "../../src/cli/io.js";
import { ConfigError, UsageError } from "../../src/errors.js";
import { tempDir } from "./helpers.js";

function captureIo(): CliIo & { stdout: string; stderr: string } {
  const io = {
    stdout: "",
    stderr: "",
    out: (text: string) => void (io.stdout += text),
    data: (text: string) => void (io.stdout += text),
    err: (text: string) => void (io.stderr += text),
  };
  return io;
}

interface ExpandOutput {
  tools: Array<{ name: string; command: string[]; parameters: Array<{ name: string; inject_as: string; position?: number }> }>;
}

describe("delta init", async () => {
  const templates = (await readdir(findTemplatesDir())).sort();

  it("ships the minimal and hello-world templates", () => {
    expect(templates).toEqual(expect.arrayContaining(["hello-world", "minimal"]));
  });

  it.each(templates)("writes an agent from the %s template that loads cleanly and is named after its directory", async (template) => {
    const cwd = await tempDir();
    const io = captureIo();
    expect(await init({ name: `agent-${template}`, template, cwd }, io)).toBe(0);
    const warnings: string[] = [];
    const agent = await loadAgent(path.join(cwd, `agent-${template}`), { warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    expect(agent.name).toBe(`agent-${template}`);
    expect(agent.llm.model).toBe("gpt-4o-mini");
    expect(agent.tools.length).toBeGreaterThan(0);
    expect(io.stdout).toBe("");
    expect(io.stderr).toContain(`delta run --agent agent-${template}`);
  });

  it("defaults to the hello-world template", async () => {
    const cwd = await tempDir();
    await init({ name: "my-agent", cwd }, captureIo());
    const agent = await loadAgent(path.join(cwd, "my-agent"));
    expect(agent.name).toBe("my-agent");
    expect(agent.tools.map((t) => t.name)).toEqual(["list_files", "read_file", "write_file", "count_lines"]);
  });

  it("writes a .gitignore that keeps the agent's workspaces (its runs) and the .env its next steps suggest out of its repository", async () => {
    const cwd = await tempDir();
    const io = captureIo();
    await init({ name: "ignored", cwd }, io);
    const agent = path.join(cwd, "ignored");
    expect(io.stderr).toContain(`or put it in ${path.join("ignored", ".env")} (git-ignored)`);
    await execa("git", ["init", "--quiet", agent]);
    await mkdir(path.join(agent, "workspaces", "W001"), { recursive: true });
    await writeFile(path.join(agent, "workspaces", "W001", "run.txt"), "x");
    await writeFile(path.join(agent, ".env"), "DELTA_API_KEY=sk-secret\n");
    await writeFile(path.join(agent, ".env.local"), "DELTA_API_KEY=sk-secret\n");
    const status = (await execa("git", ["-C", agent, "status", "--porcelain", "--untracked-files=all"])).stdout.split("\n");
    expect(status.sort()).toEqual(["?? .gitignore", "?? agent.yaml", "?? context.yaml", "?? system_prompt.md"]);
  });

  it("refuses to guess a name, and creates nothing", async () => {
    const cwd = await tempDir();
    await expect(init({ cwd }, captureIo())).rejects.toThrow("delta init needs the name of the agent directory to create, e.g. delta init my-agent");
    expect(await readdir(cwd)).toEqual([]);
  });

  it("writes into an existing empty directory but refuses a non-empty one", async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, "empty"));
    expect(await init({ name: "empty", cwd, yes: true }, captureIo())).toBe(0);
    await mkdir(path.join(cwd, "full"));
    await writeFile(path.join(cwd, "full", "keep.txt"), "mine");
    const refusal = init({ name: "full", cwd }, captureIo());
    await expect(refusal).rejects.toBeInstanceOf(UsageError);
    await expect(refusal).rejects.toThrow("already exists and is not empty");
    expect(await readdir(path.join(cwd, "full"))).toEqual(["keep.txt"]);
  });

  it("refuses an unknown template and lists the available ones", async () => {
    const cwd = await tempDir();
    await expect(init({ name: "x", template: "nope", cwd }, captureIo())).rejects.toThrow(`Unknown template 'nope'. Available templates: ${templates.join(", ")}`);
    expect(await readdir(cwd)).toEqual([]);
  });
});

describe("delta tool expand", () => {
  it("prints the hello-world tools as YAML with their argv plans", async () => {
    const cwd = await tempDir();
    await init({ name: "hw", template: "hello-world", cwd }, captureIo());
    const io = captureIo();
    expect(await toolExpand(path.join(cwd, "hw", "agent.yaml"), io)).toBe(0);
    const output = parseYaml(io.stdout) as ExpandOutput;
    const byName = new Map(output.tools.map((t) => [t.name, t]));
    expect(byName.get("list_files")?.command).toEqual(["ls", "-la", "--", "${directory}"]);
    expect(byName.get("write_file")?.command).toEqual(["tee", "--", "${path}"]);
    expect(byName.get("write_file")?.parameters).toEqual([
      { name: "path", type: "string", inject_as: "argument", position: 0, required: true, leading_dash: "allowed: after -- in the template" },
      { name: "content", type: "string", inject_as: "stdin", required: true },
    ]);
    expect(byName.get("count_lines")?.command).toEqual(["sh", "-c", 'cat -- "$1" | wc -l', "--"]);
    expect(byName.get("count_lines")?.parameters[0]).toMatchObject({ name: "path", inject_as: "argument", position: 0 });
  });

  it("accepts the agent directory and refuses a path that is not an agent", async () => {
    const cwd = await tempDir();
    await init({ name: "m", template: "minimal", cwd }, captureIo());
    const io = captureIo();
    await toolExpand(path.join(cwd, "m"), io);
    expect((parseYaml(io.stdout) as ExpandOutput).tools.map((t) => t.name)).toEqual(["current_date"]);
    await expect(toolExpand(path.join(cwd, "m", "system_prompt.md"), captureIo())).rejects.toBeInstanceOf(ConfigError);
    await expect(toolExpand(path.join(cwd, "absent"), captureIo())).rejects.toThrow("not found");
  });
});
