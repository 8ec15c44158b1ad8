import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { configErrorOf, makeAgent, MINIMAL_AGENT_YAML, tempDir } from "./helpers.js";

function agentYaml(imports: string[], tools = ""): string {
  return `${MINIMAL_AGENT_YAML}imports:\n${imports.map((i) => `  - ${i}\n`).join("")}${tools ? `tools:\n${tools}` : ""}`;
}

describe("imports", () => {
  it("merges imports depth-first, then local tools, the last definition of a name winning", async () => {
    const home = await makeAgent({
      "agent.yaml": agentYaml(["./tools/a.yaml", "./tools/b.yaml"], "  - name: greet\n    exec: echo Bonjour\n  - name: local\n    exec: pwd\n"),
      "tools/a.yaml": "imports:\n  - ./nested/c.yaml\ntools:\n  - name: greet\n    exec: echo Hello\n  - name: from_a\n    exec: ls\n",
      "tools/nested/c.yaml": "tools:\n  - name: from_c\n    exec: 'cat ${path}'\n  - name: from_a\n    exec: echo overridden-by-a\n",
      "tools/b.yaml": "tools:\n  - name: from_b\n    shell: 'ls | head'\n",
    });
    const agent = await loadAgent(home);
    expect(agent.tools.map((t) => t.name)).toEqual(["from_c", "from_a", "greet", "from_b", "local"]);
    const byName = new Map(agent.tools.map((t) => [t.name, t]));
    expect(byName.get("greet")?.argv).toEqual([{ literal: "echo" }, { literal: "Bonjour" }]);
    expect(byName.get("from_a")?.argv).toEqual([{ literal: "ls" }]);
    expect(byName.get("from_c")?.source).toBe("tools/nested/c.yaml");
  });

  it("resolves an import relative to the importing file", async () => {
    const home = await makeAgent({
      "agent.yaml": agentYaml(["tools/a.yaml"]),
      "tools/a.yaml": "imports: [b.yaml]\ntools: []\n",
      "tools/b.yaml": "tools:\n  - { name: b_tool, exec: ls }\n",
    });
    expect((await loadAgent(home)).tools.map((t) => t.name)).toEqual(["b_tool"]);
  });

  it("refuses a cycle and shows the chain of files", async () => {
    const home = await makeAgent({
      "agent.yaml": agentYaml(["./tools/a.yaml"]),
      "tools/a.yaml": "imports: [./b.yaml]\ntools: []\n",
      "tools/b.yaml": "imports: [./a.yaml]\ntools: []\n",
    });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain(`tools/b.yaml: imports[0]: import cycle ${path.join(home, "agent.yaml")} -> tools/a.yaml -> tools/b.yaml -> tools/a.yaml`);
  });

  it("refuses an import that leaves the agent directory", async () => {
    const outside = await tempDir();
    await writeFile(path.join(outside, "shared.yaml"), "tools: []\n");
    const home = await makeAgent({ "agent.yaml": agentYaml([path.join(outside, "shared.yaml")]) });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain("agent.yaml: imports[0]:");
    expect(message).toContain("outside the agent directory");
    expect(message).toContain("imports must stay inside the agent directory");
  });

  it("refuses a symlink inside the agent that points outside it", async () => {
    const outside = await tempDir();
    await writeFile(path.join(outside, "shared.yaml"), "tools:\n  - { name: evil, exec: ls }\n");
    const home = await makeAgent({ "agent.yaml": agentYaml(["./tools/shared.yaml"]) });
    await mkdir(path.join(home, "tools"));
    await symlink(path.join(outside, "shared.yaml"), path.join(home, "tools", "shared.yaml"));
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain(`resolves to ${await realpath(path.join(outside, "shared.yaml"))}`);
  });

  it("names a missing import entry", async () => {
    const home = await makeAgent({ "agent.yaml": agentYaml(["./tools/nope.yaml"]) });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain("agent.yaml: imports[0]: './tools/nope.yaml' not found");
  });

  it("requires an imported file to be a mapping with a tools list", async () => {
    const noTools = await makeAgent({ "agent.yaml": agentYaml(["./t.yaml"]), "t.yaml": "imports: []\n" });
    expect(await configErrorOf(loadAgent(noTools))).toContain("t.yaml: tools:");
    const list = await makeAgent({ "agent.yaml": agentYaml(["./t.yaml"]), "t.yaml": "- name: x\n" });
    expect(await configErrorOf(loadAgent(list))).toContain("t.yaml:1:1: the top level must be a mapping");
  });

  it("names the imported file and tool path in a tool error", async () => {
    const home = await makeAgent({ "agent.yaml": agentYaml(["./tools/a.yaml"]), "tools/a.yaml": "tools:\n  - name: x\n    exec: 'a > b'\n" });
    expect(await configErrorOf(loadAgent(home))).toContain("tools/a.yaml: tools[0].exec (tool 'x'): Shell metacharacter '>'");
  });
});

describe("env_passthrough", () => {
  it("merges the names of agent.yaml and its imports, in import order, each once", async () => {
    const home = await makeAgent({
      "agent.yaml": `${agentYaml(["./tools/a.yaml"])}env_passthrough: [DELTA_API_KEY, GH_TOKEN]\n`,
      "tools/a.yaml": "imports: [./b.yaml]\ntools: []\nenv_passthrough: [OPENAI_API_KEY, DELTA_API_KEY]\n",
      "tools/b.yaml": "tools: []\nenv_passthrough: [ANTHROPIC_API_KEY]\n",
    });
    expect((await loadAgent(home)).envPassthrough).toEqual(["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DELTA_API_KEY", "GH_TOKEN"]);
  });

  it("is empty when no file names any", async () => {
    expect((await loadAgent(await makeAgent())).envPassthrough).toEqual([]);
  });

  it("refuses an entry that is not the name of an environment variable, naming the field", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}env_passthrough: [DELTA_API_KEY, "NOT A NAME"]\n` });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain("agent.yaml: env_passthrough[1]:");
    expect(message).toContain("must be the name of an environment variable");
  });
});
