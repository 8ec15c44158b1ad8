import { realpath, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { configErrorOf, makeAgent, MINIMAL_AGENT_YAML, tempDir } from "./helpers.js";

describe("loading agent.yaml", () => {
  it("loads a minimal agent with defaults filled in", async () => {
    const home = await makeAgent();
    const agent = await loadAgent(home);
    expect(agent.home).toBe(await realpath(home));
    expect(agent.configPath).toBe(path.join(agent.home, "agent.yaml"));
    expect(agent.name).toBe("test-agent");
    expect(agent.llm).toEqual({
      model: "gpt-4o-mini",
      max_retries: 3,
      max_retry_wait_ms: 60000,
      stream: false,
      idle_timeout_ms: 120000,
      max_reply_ms: 600000,
      max_reply_bytes: 64 << 20,
      max_tool_calls: 128,
      max_reply_depth: 64,
    });
    expect(agent.tools).toEqual([]);
    expect(agent.hooks).toEqual({});
    expect(agent.context.sources.map((s) => s.type)).toEqual(["file", "journal"]);
  });

  it("reads every llm setting, pricing included", async () => {
    const home = await makeAgent({
      "agent.yaml": `name: a\nversion: "1.2.0"\ndescription: d\nllm:\n  model: m\n  temperature: 0.5\n  max_tokens: 100\n  top_p: 0.9\n  seed: 7\n  stop: ["END"]\n  base_url: http://localhost:11434/v1\n  timeout_ms: 5000\n  max_retries: 0\n  max_retry_wait_ms: 5000\n  stream: true\n  idle_timeout_ms: 600000\n  max_reply_ms: 900000\n  max_reply_bytes: 1000\n  max_tool_calls: 5\n  max_reply_depth: 10\n  pricing: { input_per_million: 2.5, output_per_million: 10, cached_input_per_million: 1.25 }\n  budget: { max_cost_usd: 1.5, max_tokens: 200000 }\n`,
    });
    const agent = await loadAgent(home);
    expect(agent.version).toBe("1.2.0");
    expect(agent.description).toBe("d");
    expect(agent.llm).toEqual({
      model: "m",
      temperature: 0.5,
      max_tokens: 100,
      top_p: 0.9,
      seed: 7,
      stop: ["END"],
      base_url: "http://localhost:11434/v1",
      timeout_ms: 5000,
      max_retries: 0,
      max_retry_wait_ms: 5000,
      stream: true,
      idle_timeout_ms: 600000,
      max_reply_ms: 900000,
      max_reply_bytes: 1000,
      max_tool_calls: 5,
      max_reply_depth: 10,
      pricing: { input_per_million: 2.5, output_per_million: 10, cached_input_per_million: 1.25 },
      budget: { max_cost_usd: 1.5, max_tokens: 200000 },
    });
  });

  it("reports a YAML syntax error with file, line and column", async () => {
    const home = await makeAgent({ "agent.yaml": "name: a\nllm:\n  model: [unclosed\n" });
    expect(await configErrorOf(loadAgent(home))).toMatch(/^\/\S+\/agent\.yaml:\d+:\d+: /);
  });

  it("refuses an empty file and a root that is not a mapping", async () => {
    expect(await configErrorOf(loadAgent(await makeAgent({ "agent.yaml": "# nothing\n" })))).toContain("agent.yaml: the file is empty");
    expect(await configErrorOf(loadAgent(await makeAgent({ "agent.yaml": "- a\n- b\n" })))).toContain("top level must be a mapping");
  });

  it("names the file, field path, zod's message and a fix for each schema issue, one per line", async () => {
    const home = await makeAgent({ "agent.yaml": "name: a\nllm:\n  model: m\n  temperature: 3\nmodle: x\n" });
    const lines = (await configErrorOf(loadAgent(home))).split("\n");
    expect(lines).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringContaining("agent.yaml: llm.temperature: Too big: expected number to be <=2"));
    expect(lines.find((l) => l.includes("llm.temperature"))).toMatch(/\(at \/\S+\/agent\.yaml:4:16\)/);
    expect(lines).toContainEqual(expect.stringMatching(/^\/\S+\/agent\.yaml: Unrecognized key: "modle" — remove it or fix the spelling/));
  });

  it("points at a misspelt key (not its value), names agent.yaml by its path, and guesses the key meant", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}descripton:\n  A long text\ntools:\n  - name: t\n    exce: ls\n` });
    const lines = (await configErrorOf(loadAgent(home))).split("\n");
    const keyLine = MINIMAL_AGENT_YAML.split("\n").length;
    expect(lines).toContainEqual(`${path.join(home, "agent.yaml")}: Unrecognized key: "descripton" — remove it or fix the spelling (did you mean \`description\` for \`descripton\`?) (at ${path.join(home, "agent.yaml")}:${keyLine}:1)`);
    expect(lines).toContainEqual(expect.stringContaining("tools[0]: Unrecognized key: \"exce\" — remove it or fix the spelling (did you mean `exec` for `exce`?)"));
  });

  it("guesses no key for one that resembles none", async () => {
    const message = await configErrorOf(loadAgent(await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}zzzzzz: 1\n` })));
    expect(message).toContain('Unrecognized key: "zzzzzz" — remove it or fix the spelling (at');
    expect(message).not.toContain("did you mean");
  });

  it("says a missing required field must be added", async () => {
    const message = await configErrorOf(loadAgent(await makeAgent({ "agent.yaml": "name: a\n" })));
    expect(message).toContain("agent.yaml: llm:");
    expect(message).toContain("this field is required; add it");
  });

  it("names a tool's misspelled key with its path", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}tools:\n  - name: ok\n    exec: ls\n  - name: t\n    exce: ls\n` });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain('agent.yaml: tools[1]: Unrecognized key: "exce"');
  });

  it("passes expansion errors through with file and tool path", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}tools:\n  - name: t\n    exec: "cat \${f} | wc -l"\n` });
    expect(await configErrorOf(loadAgent(home))).toContain(
      "agent.yaml: tools[0].exec (tool 't'): Shell metacharacter '|' not allowed in exec: mode. Use shell: mode instead.",
    );
  });

  it("refuses two tools with one name in the same file", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}tools:\n  - { name: t, exec: ls }\n  - { name: t, exec: pwd }\n` });
    expect(await configErrorOf(loadAgent(home))).toContain("tool 't' is already defined at tools[0]");
  });

  it("requires the system prompt file and names the expected path", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}system_prompt: prompts/main.md\n` });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain("agent.yaml: system_prompt:");
    expect(message).toContain(path.join(await realpath(home), "prompts/main.md"));
  });

  it("refuses a directory without agent.yaml and suggests delta init", async () => {
    const home = await makeAgent({ "agent.yaml": null });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain(`No agent.yaml in ${await realpath(home)}`);
    expect(message).toContain("delta init");
    expect(await configErrorOf(loadAgent(path.join(home, "missing")))).toContain("not found");
  });
});

describe("legacy files", () => {
  it("loads config.yaml alone with a deprecation warning", async () => {
    const home = await makeAgent({ "agent.yaml": null, "config.yaml": MINIMAL_AGENT_YAML });
    const warnings: string[] = [];
    const agent = await loadAgent(home, { warn: (m) => warnings.push(m) });
    expect(agent.configPath).toBe(path.join(agent.home, "config.yaml"));
    expect(warnings).toEqual(["[DEPRECATION WARNING] config.yaml is deprecated; rename it to agent.yaml"]);
  });

  it("prefers agent.yaml over config.yaml and warns", async () => {
    const home = await makeAgent({ "config.yaml": "name: old\nllm: { model: m }\n" });
    const warnings: string[] = [];
    const agent = await loadAgent(home, { warn: (m) => warnings.push(m) });
    expect(agent.name).toBe("test-agent");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("both agent.yaml and config.yaml");
  });
});

describe("hooks", () => {
  const hook = "  pre_tool_execution:\n    command: ['${AGENT_HOME}/check.sh']\n";

  it("loads hooks.yaml leaving ${AGENT_HOME} as text", async () => {
    const home = await makeAgent({ "hooks.yaml": "on_run_end:\n  command: ['${AGENT_HOME}/done.sh', '${CWD}']\n  timeout_ms: 500\n" });
    expect((await loadAgent(home)).hooks).toEqual({ on_run_end: { command: ["${AGENT_HOME}/done.sh", "${CWD}"], timeout_ms: 500 } });
  });

  it("treats a hooks.yaml of only comments as no hooks", async () => {
    expect((await loadAgent(await makeAgent({ "hooks.yaml": "# none yet\n" }))).hooks).toEqual({});
  });

  it("uses lifecycle_hooks from agent.yaml with a deprecation warning when hooks.yaml is absent", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}lifecycle_hooks:\n${hook}` });
    const warnings: string[] = [];
    const agent = await loadAgent(home, { warn: (m) => warnings.push(m) });
    expect(agent.hooks).toEqual({ pre_tool_execution: { command: ["${AGENT_HOME}/check.sh"], timeout_ms: 30000 } });
    expect(warnings).toEqual([expect.stringMatching(/^\[DEPRECATION WARNING\] \/\S+\/agent\.yaml: lifecycle_hooks is deprecated/)]);
  });

  it("lets hooks.yaml win over lifecycle_hooks and warns that they are ignored", async () => {
    const home = await makeAgent({
      "agent.yaml": `${MINIMAL_AGENT_YAML}lifecycle_hooks:\n${hook}`,
      "hooks.yaml": "on_error:\n  command: [notify]\n",
    });
    const warnings: string[] = [];
    const agent = await loadAgent(home, { warn: (m) => warnings.push(m) });
    expect(Object.keys(agent.hooks)).toEqual(["on_error"]);
    expect(warnings[0]).toContain("lifecycle_hooks is ignored because hooks.yaml exists");
  });

  it("names an unknown hook in hooks.yaml", async () => {
    const home = await makeAgent({ "hooks.yaml": "pre_llm_requests:\n  command: [x]\n" });
    expect(await configErrorOf(loadAgent(home))).toContain('hooks.yaml: Unrecognized key: "pre_llm_requests"');
  });
});

describe("context.yaml", () => {
  it("refuses a missing context.yaml with the design's message and default template", async () => {
    const home = await makeAgent({ "context.yaml": null });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain(`context.yaml not found in ${await realpath(home)}`);
    expect(message).toContain("Delta Engine requires an explicit context.yaml file");
    expect(message).toContain("Quick fix - Create context.yaml with default content:");
    expect(message).toContain("path: '${CWD}/DELTA.md'\n    on_missing: skip");
  });

  it("validates the sources", async () => {
    const home = await makeAgent({ "context.yaml": "sources:\n  - type: file\n" });
    expect(await configErrorOf(loadAgent(home))).toContain("context.yaml: sources[0].path:");
  });
});

describe("symlinked agent home", () => {
  it("reports the realpath as home", async () => {
    const home = await makeAgent();
    const links = await tempDir();
    await symlink(home, path.join(links, "agent"));
    expect((await loadAgent(path.join(links, "agent"))).home).toBe(await realpath(home));
  });
});
