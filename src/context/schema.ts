// The context.yaml schema: the ordered sources that make up the model's context.
import { z } from "zod";

const OnMissingSchema = z.enum(["skip", "error"]).default("error");

const FileSourceSchema = z.strictObject({
  type: z.literal("file"),
  id: z.string().min(1).optional(),
  path: z.string().min(1),
  on_missing: OnMissingSchema,
});

const ComputedFileSourceSchema = z.strictObject({
  type: z.literal("computed_file"),
  id: z.string().min(1).optional(),
  generator: z.strictObject({
    command: z.array(z.string()).min(1),
    timeout_ms: z.number().int().positive().default(30_000),
  }),
  output_path: z.string().min(1),
  on_missing: OnMissingSchema,
});

const JournalSourceSchema = z.strictObject({
  type: z.literal("journal"),
  id: z.string().min(1).optional(),
  /** At most this many iterations shown; past it the window jumps to the last half (context/window-rule.ts). */
  max_iterations: z.number().int().positive().optional(),
  /** At most this many tokens of conversation (user messages included); past it the window jumps to half. */
  max_tokens: z.number().int().positive().optional(),
});

/** Skills listed at once; a source with more is refused when the agent loads. */
const DEFAULT_MAX_SKILLS = 100;
/** Bytes of a skills source's listing (the paragraph and one line per skill) the model gets in every request. */
const DEFAULT_MAX_SKILLS_LISTING_BYTES = 32_768;

const SkillsSourceSchema = z
  .strictObject({
    type: z.literal("skills"),
    id: z.string().min(1).optional(),
    /** Folders inside the agent home (after symlinks): each subfolder holding a SKILL.md is a skill, or the folder itself when it holds one. */
    paths: z.array(z.string().min(1)).optional(),
    /** Absolute folders outside the agent home, named on purpose (a skills folder several agents share); read like `paths`. */
    shared_paths: z.array(z.string().min(1)).optional(),
    max_skills: z.number().int().positive().default(DEFAULT_MAX_SKILLS),
    max_listing_bytes: z.number().int().positive().default(DEFAULT_MAX_SKILLS_LISTING_BYTES),
  })
  .refine((source) => (source.paths?.length ?? 0) + (source.shared_paths?.length ?? 0) > 0, {
    message: "a skills source names at least one folder: add paths: [skills] (a folder in the agent directory) or shared_paths: [/absolute/folder]",
    path: ["paths"],
  });

const ContextSourceSchema = z.discriminatedUnion("type", [
  FileSourceSchema,
  ComputedFileSourceSchema,
  JournalSourceSchema,
  SkillsSourceSchema,
]);

export const ContextConfigSchema = z.strictObject({
  sources: z.array(ContextSourceSchema).min(1),
});

export type FileSource = z.infer<typeof FileSourceSchema>;
export type ComputedFileSource = z.infer<typeof ComputedFileSourceSchema>;
export type SkillsSource = z.infer<typeof SkillsSourceSchema>;
export type ContextSource = z.infer<typeof ContextSourceSchema>;
export type ContextConfig = z.infer<typeof ContextConfigSchema>;
