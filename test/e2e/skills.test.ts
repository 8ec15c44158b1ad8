// End to end: an agent's skills — listed by name and description in every request, and refused at load beyond their bounds (what load_skill reads is test/loop/skills.test.ts).
import { existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { messagesOf, reply, startMockLlm, type RecordedRequest } from "../support/mock-llm.js";
import { delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const PDF_BODY = "# Filling PDF forms\n\nBODY-PDF-7731: run the fill_form tool on each field, then check it.\n";
const PDF_SKILL = `---\nname: pdf-forms\ndescription: >\n  Fills in PDF forms.\n  Use when a task mentions a PDF form.\nlicense: MIT\nmetadata:\n  author: docs-team\n---\n${PDF_BODY}`;
const CHANGELOG_SKILL = "---\nname: changelog\ndescription: Writes a changelog entry in the project's format.\n---\nBODY-CHANGELOG-4410\n";

const SKILLS_CONTEXT = (skills: string): string => `sources:\n  - type: file\n    path: '\${AGENT_HOME}/system_prompt.md'\n  - type: skills\n${skills}  - type: journal\n`;

const { root } = setUpE2e("delta-skills-");

/** An agent whose context lists the skills under skills/ (or what `skills` says), with these files. */
function skillAgent(name: string, files: Record<string, string>, skills = "    paths: [skills]\n"): string {
  return writeAgent(root, { contextYaml: SKILLS_CONTEXT(skills), files }, name);
}

function pdfAgent(name: string, extra: Record<string, string> = {}): string {
  return skillAgent(name, {
    "skills/pdf-forms/SKILL.md": PDF_SKILL,
    "skills/pdf-forms/reference.md": "REFERENCE-TEXT: field names are case-sensitive.\n",
    "skills/changelog/SKILL.md": CHANGELOG_SKILL,
    ...extra,
  });
}

function toolNames(request: RecordedRequest): string[] {
  return ((request.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((tool) => tool.function.name);
}

function wholeRequest(request: RecordedRequest): string {
  return messagesOf(request).map((message) => message.content ?? "").join("\n");
}

async function refusal(agent: string): Promise<string> {
  const result = await delta(["run", "--agent", agent, "-y", "-m", "x", "--replay", join(root, "none.jsonl")]);
  expect(result.exitCode, result.stderr).toBe(126);
  expect(existsSync(join(agent, "workspaces")), "a refused run leaves no workspace").toBe(false);
  expect(result.stderr).not.toMatch(/Internal error|\n\s+at /);
  return result.stderr;
}

// Each test starts the real binary several times; on a shared machine that takes longer than the default 30 s.
describe.concurrent("skills", { timeout: 90_000 }, () => {
  it("lists each skill's name and description in the first request, offers load_skill, and sends no skill's body", async () => {
    const agent = pdfAgent("listed");
    const server = await startMockLlm([reply.text("nothing to do")]);
    try {
      const ws = join(root, "ws-listed");
      const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "listed", "-m", "hello"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode, result.stderr).toBe(0);
      const first = server.requests[0]!;
      const block = messagesOf(first).find((message) => message.role === "system" && (message.content ?? "").includes("# Context Block: skills"));
      expect(block?.content).toContain("- changelog: Writes a changelog entry in the project's format.\n- pdf-forms: Fills in PDF forms. Use when a task mentions a PDF form.\n");
      expect(block?.content).toContain("call load_skill with its name");
      expect(wholeRequest(first)).not.toContain("BODY-PDF-7731");
      expect(wholeRequest(first)).not.toContain("BODY-CHANGELOG-4410");
      expect(toolNames(first)).toEqual(["echo", "ask_human", "load_skill"]);
      const tool = (first.body as { tools: { function: { name: string; parameters: { properties: { name: { enum: string[] } } } } }[] }).tools[2]!;
      expect(tool.function.parameters.properties.name.enum).toEqual(["changelog", "pdf-forms"]);
    } finally {
      await server.close();
    }
  });

  it("refuses a source with more skills than max_skills, naming both numbers", async () => {
    const files: Record<string, string> = {};
    for (const name of ["one", "two", "three"]) files[`skills/${name}/SKILL.md`] = `---\nname: ${name}\ndescription: Skill ${name}.\n---\nbody\n`;
    const stderr = await refusal(skillAgent("too-many", files, "    paths: [skills]\n    max_skills: 2\n"));
    expect(stderr).toContain("context.yaml: sources[1]: 3 skills found, more than max_skills 2");
    expect(stderr).toContain("raise max_skills");
  });

  it("refuses 101 skills under the default bound of 100", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 101; i += 1) files[`skills/s${i}/SKILL.md`] = `---\nname: s${i}\ndescription: Skill ${i}.\n---\nbody\n`;
    expect(await refusal(skillAgent("default-many", files))).toContain("101 skills found, more than max_skills 100");
  });

  it("refuses a listing over max_listing_bytes (and over the default 32768), naming its size and the longest descriptions", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i += 1) files[`skills/s${i}/SKILL.md`] = `---\nname: s${i}\ndescription: ${"word ".repeat(200).trim()}\n---\nbody\n`;
    const byDefault = await refusal(skillAgent("long-listing", files));
    expect(byDefault).toMatch(/context\.yaml: sources\[1\]: the listing of its 40 skills is (\d+) bytes, more than max_listing_bytes 32768/);
    expect(Number(/is (\d+) bytes/.exec(byDefault)![1])).toBeGreaterThan(40 * 1000);
    expect(byDefault).toMatch(/Shorten the longest descriptions \(bytes: s\d+ \d+, /);

    const small = await refusal(skillAgent("small-listing", { "skills/changelog/SKILL.md": CHANGELOG_SKILL }, "    paths: [skills]\n    max_listing_bytes: 100\n"));
    expect(small).toMatch(/the listing of its 1 skills is \d+ bytes, more than max_listing_bytes 100/);
  });

  it("refuses a SKILL.md larger than load_skill reads", async () => {
    const big = `---\nname: big\ndescription: A big skill.\n---\n${"x".repeat(70_000)}\n`;
    expect(await refusal(skillAgent("big-skill", { "skills/big/SKILL.md": big }))).toContain(`skills/big/SKILL.md: is ${Buffer.byteLength(big)} bytes, more than the 65536 bytes load_skill reads`);
  });

  it("refuses a broken front matter naming the file and line", async () => {
    const syntax = await refusal(skillAgent("broken-yaml", { "skills/changelog/SKILL.md": "---\nname: changelog\ndescription: [unclosed\n---\nbody\n" }));
    expect(syntax).toMatch(/Error: skills\/changelog\/SKILL\.md:3:\d+: /);
    const name = await refusal(skillAgent("broken-name", { "skills/changelog/SKILL.md": "---\ndescription: d\nname: Change_Log\n---\n" }));
    expect(name).toContain("skills/changelog/SKILL.md: name: must be lowercase letters, digits and hyphens");
    expect(name).toContain("(at skills/changelog/SKILL.md:3:7)");
  });

  it.each([
    ["a folder above the agent", "    paths: ['../shared']\n", "resolves to", "outside the agent directory"],
    ["a symbolic link out of the agent", "    paths: [linked]\n", "resolves to", "outside the agent directory"],
    ["${AGENT_HOME}/.. spelled out", "    paths: ['${AGENT_HOME}/../shared']\n", "resolves to", "outside the agent directory"],
    ["the workspace", "    paths: ['${CWD}/skills']\n", "uses ${CWD}", "before a workspace is chosen"],
  ])("refuses a paths: entry escaping the agent home: %s", async (_name, skills, first, second) => {
    const shared = join(root, "shared");
    mkdirSync(join(shared, "changelog"), { recursive: true });
    writeFileSync(join(shared, "changelog", "SKILL.md"), CHANGELOG_SKILL);
    const agent = skillAgent(`escape-${_name.replace(/[^a-z]/g, "")}`, {}, skills);
    symlinkSync(shared, join(agent, "linked"));
    const stderr = await refusal(agent);
    expect(stderr).toContain("context.yaml: sources[1].paths[0]:");
    expect(stderr).toContain(first);
    expect(stderr).toContain(second);
  });

  it("refuses a skill folder inside skills/ that a symbolic link leads out of it", async () => {
    const agent = skillAgent("escape-folder", { "skills/changelog/SKILL.md": CHANGELOG_SKILL });
    const outside = join(root, "outside-skill", "pdf-forms");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "SKILL.md"), PDF_SKILL);
    symlinkSync(outside, join(agent, "skills", "pdf-forms"));
    const stderr = await refusal(agent);
    expect(stderr).toContain("skills/pdf-forms: this skill folder leads through a symbolic link to");
    expect(stderr).toContain("outside");
  });

  it("reads a shared folder listed by its absolute path under shared_paths, and refuses a relative one", async () => {
    const shared = join(root, "team-skills");
    mkdirSync(join(shared, "changelog"), { recursive: true });
    writeFileSync(join(shared, "changelog", "SKILL.md"), CHANGELOG_SKILL);
    const agent = skillAgent("shared", { "skills/pdf-forms/SKILL.md": PDF_SKILL }, `    paths: [skills]\n    shared_paths: ['${shared}']\n`);
    const listed = await delta(["skills", "list", "--agent", agent, "--format", "json"]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string; path: string }[]).map((skill) => [skill.name, skill.path])).toEqual([
      ["pdf-forms", "skills/pdf-forms/SKILL.md"],
      ["changelog", join(realpathSync(shared), "changelog", "SKILL.md")],
    ]);
    const relative = await refusal(skillAgent("shared-relative", {}, "    shared_paths: ['../team-skills']\n"));
    expect(relative).toContain("context.yaml: sources[1].shared_paths[0]: '../team-skills' is not an absolute path");
  });

  it("delta skills list --agent prints each skill with its size and description", async () => {
    const agent = pdfAgent("listing-cli");
    const result = await delta(["skills", "list", "--agent", agent]);
    expect(result.exitCode, result.stderr).toBe(0);
    const pdfBytes = Buffer.byteLength(PDF_SKILL);
    const changelogBytes = Buffer.byteLength(CHANGELOG_SKILL);
    expect(result.stdout).toBe(
      `changelog  ${String(changelogBytes).padStart(3)} B  skills/changelog/SKILL.md\n` +
        "           Writes a changelog entry in the project's format.\n" +
        `pdf-forms  ${String(pdfBytes).padStart(3)} B  skills/pdf-forms/SKILL.md\n` +
        "           Fills in PDF forms. Use when a task mentions a PDF form.\n" +
        `2 skills; every request lists them in ${/lists them in (\d+) bytes/.exec(result.stdout)?.[1]} bytes\n`,
    );
    const json = await delta(["skills", "list", "--agent", agent, "--format", "json"]);
    expect(JSON.parse(json.stdout)).toEqual([
      { name: "changelog", description: "Writes a changelog entry in the project's format.", bytes: changelogBytes, path: "skills/changelog/SKILL.md" },
      { name: "pdf-forms", description: "Fills in PDF forms. Use when a task mentions a PDF form.\n", bytes: pdfBytes, path: "skills/pdf-forms/SKILL.md" },
    ]);
  });

  it("offers no load_skill to an agent without skills, and refuses a tool of that name beside skills", async () => {
    const plain = writeAgent(root, {}, "no-skills");
    const list = await delta(["tool", "list", plain]);
    expect(list.stdout).not.toContain("load_skill");
    const clash = pdfAgent("clash");
    writeFileSync(join(clash, "agent.yaml"), "name: clash\nllm:\n  model: m\ntools:\n  - name: load_skill\n    exec: \"cat ${file}\"\n");
    expect(await refusal(clash)).toContain("agent.yaml: tool 'load_skill' has the name of the built-in tool that reads this agent's skills; rename it");
    expect(readdirSync(clash)).not.toContain("workspaces");
  });
});
