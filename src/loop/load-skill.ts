// The built-in load_skill tool: a skill's instructions (its SKILL.md without the front matter) or one of its files, read from inside its folder.
import { z } from "zod";
import { parseSkillDocument } from "../agent/skills/front-matter.js";
import type { Skill } from "../agent/skills/scan.js";
import { listSkillFiles, MAX_SKILL_FILE_BYTES, readBoundedText, resolveSkillFile, type Outcome } from "../agent/skills/skill-files.js";
import { LOAD_SKILL } from "../context/skills-listing.js";
import type { FunctionTool } from "../conversation.js";
import { errorMessage } from "../errors.js";

/** What the model is offered: the skills' names as the allowed values, so a model that keeps to a schema cannot name another. */
export function loadSkillTool(skills: readonly Skill[]): FunctionTool {
  return {
    type: "function",
    function: {
      name: LOAD_SKILL,
      description:
        "Read a skill listed in the context: without file, its instructions; with file, one of the files they mention. " +
        "Read a skill's instructions before doing a task it covers. Nothing is run.",
      parameters: {
        type: "object",
        properties: {
          name: { type: "string", enum: skills.map((skill) => skill.name), description: "The skill's name, as listed" },
          file: { type: "string", description: "A file of the skill, relative to its folder (e.g. reference.md); omit it to read the instructions" },
        },
        required: ["name"],
        additionalProperties: false,
      },
    },
  };
}

const LoadSkillArgsSchema = z.strictObject({ name: z.string().min(1), file: z.string().min(1).optional() });

/** A call the engine can carry out: the skill, the file the model named (if any), and the real path that will be read. */
interface SkillRead {
  skill: Skill;
  file: string | null;
  path: string;
}

/** The model's arguments resolved to one file inside one skill's folder, or why the call cannot be made (its observation). */
export function planSkillRead(skills: readonly Skill[], args: unknown): SkillRead | string {
  const parsed = LoadSkillArgsSchema.safeParse(args);
  if (!parsed.success) {
    return `${LOAD_SKILL} needs {"name": string, "file"?: string}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")}`;
  }
  const { name, file } = parsed.data;
  const skill = skills.find((candidate) => candidate.name === name);
  if (!skill) return `No skill '${name}'. Skills: ${skills.map((candidate) => candidate.name).join(", ")}.`;
  const target = resolveSkillFile(skill.dir, file ?? "SKILL.md");
  if (!target.ok) return `${LOAD_SKILL}: '${file ?? "SKILL.md"}' of skill '${name}' ${target.problem}.${file === undefined ? "" : filesHint(skill)}`;
  return { skill, file: file ?? null, path: target.path };
}

/** Reads what the plan names: the text the model gets, bounded; a SKILL.md's front matter is left out (the listing carried it). */
export function readSkill(plan: SkillRead): Outcome<{ text: string }> {
  const { skill, file, path } = plan;
  const read = readBoundedText(skill.dir, path, MAX_SKILL_FILE_BYTES);
  const shown = file ?? "SKILL.md";
  if (!read.ok) return { ok: false, problem: `${LOAD_SKILL}: '${shown}' of skill '${skill.name}' ${read.problem}.` };
  if (file !== null) return { ok: true, text: read.text };
  let body: string;
  try {
    body = parseSkillDocument(read.text, skill.display).body;
  } catch (err) {
    return { ok: false, problem: `${LOAD_SKILL}: the SKILL.md of skill '${skill.name}' changed since the agent loaded and no longer reads: ${errorMessage(err)}` };
  }
  return { ok: true, text: `${body.replace(/^\s*\n/, "")}${filesNote(skill)}` };
}

/** After the instructions: the other files of the skill, so the model can ask for one by name. */
function filesNote(skill: Skill): string {
  const { files, more } = listSkillFiles(skill.dir);
  if (files.length === 0) return "";
  return `\n\n---\nFiles of skill '${skill.name}' (read one with ${LOAD_SKILL} and file): ${files.join(", ")}${more ? ", and more" : ""}\n`;
}

function filesHint(skill: Skill): string {
  const { files, more } = listSkillFiles(skill.dir);
  return files.length === 0 ? " The skill has no other files." : ` Its files: ${files.join(", ")}${more ? ", and more" : ""}.`;
}
