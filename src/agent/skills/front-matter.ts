// A SKILL.md's YAML front matter (between two `---` lines) and body, validated as the Agent Skills format defines; errors name the file and line.
import { z } from "zod";
import { ConfigError } from "../../errors.js";
import { parseYamlText, type YamlFile } from "../yaml-file.js";
import { parseWithSchema } from "../zod-issues.js";

const MAX_SKILL_NAME_CHARS = 64;
const MAX_SKILL_DESCRIPTION_CHARS = 1024;
const MAX_COMPATIBILITY_CHARS = 500;

/** Control characters other than tab and line breaks: text shown to a terminal and a model carries none. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/**
 * The fields the format defines are checked; any other field (Claude Code's `disable-model-invocation`,
 * `argument-hint`, a `version`…) is tolerated and ignored, so a skill written for another agent loads here too.
 */
const SkillFrontMatterSchema = z.looseObject({
  name: z
    .string()
    .max(MAX_SKILL_NAME_CHARS, `at most ${MAX_SKILL_NAME_CHARS} characters`)
    .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "must be lowercase letters, digits and hyphens, neither starting nor ending with a hyphen nor holding two in a row (e.g. pdf-forms)"),
  description: z
    .string()
    .max(MAX_SKILL_DESCRIPTION_CHARS, `at most ${MAX_SKILL_DESCRIPTION_CHARS} characters (move the detail into the body)`)
    .refine((text) => text.trim() !== "", "must say what the skill does and when to use it")
    .refine((text) => !CONTROL.test(text), "holds a control character; remove it"),
  license: z.string().optional(),
  compatibility: z.string().max(MAX_COMPATIBILITY_CHARS, `at most ${MAX_COMPATIBILITY_CHARS} characters`).optional(),
  "allowed-tools": z.union([z.string(), z.array(z.string())], { message: "must be a space-separated string or a list of tool names" }).optional(),
  metadata: z.record(z.string(), z.unknown(), { message: "must be a mapping (key: value lines)" }).optional(),
});

type SkillFrontMatter = z.infer<typeof SkillFrontMatterSchema>;

interface SkillDocument {
  frontMatter: SkillFrontMatter;
  /** Everything after the closing `---` line. */
  body: string;
  /** `file:line:col` of a front matter field, as messages name it. */
  locate(field: string): string;
}

const FENCE = /^---[ \t]*\r?$/;

/** Parses SKILL.md's text; `display` is how messages name the file. Throws ConfigError naming the file and line. */
export function parseSkillDocument(text: string, display: string): SkillDocument {
  const lines = text.replace(/^\uFEFF/, "").split("\n");
  if (!FENCE.test(lines[0] ?? "")) {
    throw new ConfigError(`${display}:1: a SKILL.md opens with its front matter: a line '---', the lines 'name: …' and 'description: …', then a line '---'`);
  }
  const close = lines.findIndex((line, index) => index > 0 && FENCE.test(line));
  if (close < 0) {
    throw new ConfigError(`${display}:1: the front matter opened here is never closed; add a line '---' after its last field`);
  }
  const yaml = parseYamlText(lines.slice(1, close).map((line) => line.replace(/\r$/, "")).join("\n"), display, { allowEmpty: true, firstLine: 2 });
  // Every message names a line: a missing field points at the front matter's opening line.
  const located: YamlFile = { ...yaml, locate: (path) => yaml.locate(path) ?? `${display}:1` };
  const frontMatter = parseWithSchema(SkillFrontMatterSchema, located);
  return { frontMatter, body: lines.slice(close + 1).join("\n"), locate: (field) => located.locate([field]) ?? `${display}:1` };
}
