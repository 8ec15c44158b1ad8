// Loading an agent's skills: SKILL.md front matter checked as the Agent Skills format defines, every refusal naming the file and line.
import { realpath } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { parseSkillDocument } from "../../src/agent/skills/front-matter.js";
import { configErrorOf, makeAgent } from "./helpers.js";

const CONTEXT = (skills = "    paths: [skills]\n"): string => `sources:\n  - type: file\n    path: '\${AGENT_HOME}/system_prompt.md'\n  - type: skills\n${skills}  - type: journal\n`;

function skill(name: string, description = `Does ${name}.`, extra = ""): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\nThe body of ${name}.\n`;
}

async function agentWith(files: Record<string, string>, skills?: string): Promise<string> {
  return makeAgent({ "context.yaml": CONTEXT(skills), ...files });
}

describe("a skill's front matter", () => {
  it("gives name, description and the body after the closing line; a byte-order mark and CRLF lines are read", () => {
    const doc = parseSkillDocument("\uFEFF---\r\nname: pdf-forms\r\ndescription: Fills forms.\r\n---\r\n# Body\r\n", "SKILL.md");
    expect(doc.frontMatter).toMatchObject({ name: "pdf-forms", description: "Fills forms." });
    expect(doc.body).toBe("# Body\r\n");
  });

  it("tolerates the optional fields of the format and fields other agents define", () => {
    const doc = parseSkillDocument(
      "---\nname: a\ndescription: d\nlicense: Apache-2.0\ncompatibility: Needs git\nallowed-tools: Bash(git:*) Read\nmetadata:\n  author: me\n  version: \"1.0\"\ndisable-model-invocation: false\nargument-hint: '[file]'\n---\n",
      "SKILL.md",
    );
    expect(doc.frontMatter).toMatchObject({ name: "a", license: "Apache-2.0", "allowed-tools": "Bash(git:*) Read", metadata: { author: "me", version: "1.0" } });
  });

  it.each([
    ["no opening line", "name: a\ndescription: d\n", "SKILL.md:1: a SKILL.md opens with its front matter"],
    ["no closing line", "---\nname: a\ndescription: d\n", "SKILL.md:1: the front matter opened here is never closed"],
    ["a YAML syntax error", "---\nname: a\ndescription: 'open\n---\n", "SKILL.md:3:"],
    ["a list instead of a mapping", "---\n- name\n---\n", "SKILL.md:2:1: the top level must be a mapping"],
    ["no description", "---\nname: a\n---\n", "SKILL.md: description: Invalid input: expected string, received undefined — this field is required; add it (at SKILL.md:1)"],
    ["an empty description", "---\nname: a\ndescription: '  '\n---\n", "SKILL.md: description: must say what the skill does and when to use it (at SKILL.md:3:14)"],
    ["a description of 1025 characters", `---\nname: a\ndescription: ${"d".repeat(1025)}\n---\n`, "SKILL.md: description: at most 1024 characters (move the detail into the body) — change the value to fit the limit (at SKILL.md:3:14)"],
    ["a control character in the description", "---\nname: a\ndescription: \"red \\e[31m text\"\n---\n", "SKILL.md: description: holds a control character; remove it (at SKILL.md:3:14)"],
    ["a name of 65 characters", `---\nname: ${"a".repeat(65)}\ndescription: d\n---\n`, "SKILL.md: name: at most 64 characters — change the value to fit the limit (at SKILL.md:2:7)"],
    ["capitals in the name", "---\nname: Pdf\ndescription: d\n---\n", "SKILL.md: name: must be lowercase letters, digits and hyphens"],
    ["a name starting with a hyphen", "---\nname: -pdf\ndescription: d\n---\n", "SKILL.md: name: must be lowercase letters, digits and hyphens"],
    ["two hyphens in a row", "---\nname: pdf--forms\ndescription: d\n---\n", "(at SKILL.md:2:7)"],
    ["a compatibility of 501 characters", `---\nname: a\ndescription: d\ncompatibility: ${"c".repeat(501)}\n---\n`, "SKILL.md: compatibility: at most 500 characters"],
    ["metadata that is not a mapping", "---\nname: a\ndescription: d\nmetadata: [x]\n---\n", "SKILL.md: metadata: must be a mapping"],
  ])("refuses %s, naming the file and line", (_name, text, message) => {
    let thrown: unknown;
    try {
      parseSkillDocument(text, "SKILL.md");
    } catch (err) {
      thrown = err;
    }
    expect(thrown, "refused").toBeInstanceOf(Error);
    expect((thrown as Error).message).toContain(message);
  });

  it("accepts a name of 64 characters and a description of 1024", () => {
    expect(parseSkillDocument(`---\nname: ${"a".repeat(64)}\ndescription: ${"d".repeat(1024)}\n---\n`, "SKILL.md").frontMatter.name).toHaveLength(64);
  });
});

describe("loading an agent's skills", () => {
  it("finds each folder of skills/ holding a SKILL.md, sorted by name, and renders the listing once", async () => {
    const home = await agentWith({ "skills/pdf-forms/SKILL.md": skill("pdf-forms"), "skills/changelog/SKILL.md": skill("changelog"), "skills/README.md": "not a skill", "skills/.cache/x": "hidden" });
    const agent = await loadAgent(home);
    expect(agent.skills.map((found) => [found.name, found.display, found.dir])).toEqual([
      ["changelog", "skills/changelog/SKILL.md", path.join(await realpath(home), "skills/changelog")],
      ["pdf-forms", "skills/pdf-forms/SKILL.md", path.join(await realpath(home), "skills/pdf-forms")],
    ]);
    expect(agent.skillListings.get(1)).toMatch(/\n\n- changelog: Does changelog\.\n- pdf-forms: Does pdf-forms\.\n$/);
  });

  it("reads a paths: entry that is itself a skill's folder", async () => {
    const home = await agentWith({ "skills/pdf-forms/SKILL.md": skill("pdf-forms"), "skills/changelog/SKILL.md": skill("changelog") }, "    paths: [skills/pdf-forms]\n");
    expect((await loadAgent(home)).skills.map((found) => found.name)).toEqual(["pdf-forms"]);
  });

  it("refuses a name that differs from its folder's, at the name's line", async () => {
    const home = await agentWith({ "skills/pdf/SKILL.md": skill("pdf-forms") });
    expect(await configErrorOf(loadAgent(home))).toBe(
      "skills/pdf/SKILL.md: name: 'pdf-forms' differs from its folder's name 'pdf'; the format wants them equal — rename the folder or the skill (at skills/pdf/SKILL.md:2:7)",
    );
  });

  it("refuses a folder of a skills folder without SKILL.md (a lower-case skill.md included)", async () => {
    const home = await agentWith({ "skills/pdf-forms/skill.md": skill("pdf-forms") });
    expect(await configErrorOf(loadAgent(home))).toContain("skills/pdf-forms: this folder of a skills folder has no SKILL.md; add one (named SKILL.md, in capitals)");
  });

  it("refuses two skills of one name in two folders", async () => {
    const home = await agentWith({ "skills/pdf-forms/SKILL.md": skill("pdf-forms"), "more/pdf-forms/SKILL.md": skill("pdf-forms") }, "    paths: [skills, more]\n");
    expect(await configErrorOf(loadAgent(home))).toContain("more/pdf-forms/SKILL.md: the skill 'pdf-forms' is already defined by skills/pdf-forms/SKILL.md");
  });

  it("refuses a skills source that names no folder, and a folder that does not exist", async () => {
    expect(await configErrorOf(loadAgent(await agentWith({}, "    max_skills: 3\n")))).toContain("context.yaml: sources[1].paths: a skills source names at least one folder");
    expect(await configErrorOf(loadAgent(await agentWith({}, "    paths: [nowhere]\n")))).toContain("context.yaml: sources[1].paths[0]: 'nowhere' not found");
  });

  it("refuses paths: naming the agent directory itself", async () => {
    expect(await configErrorOf(loadAgent(await agentWith({}, "    paths: ['.']\n")))).toContain("resolves to");
    expect(await configErrorOf(loadAgent(await agentWith({}, "    paths: ['.']\n")))).toContain("the agent directory itself");
  });

  it("lists no skill and offers no listing for an empty skills folder", async () => {
    const home = await agentWith({ "skills/.keep": "" });
    const agent = await loadAgent(home);
    expect(agent.skills).toEqual([]);
    expect(agent.skillListings.get(1)).toBe("");
  });
});
