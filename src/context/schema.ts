// The context.yaml schema: the ordered sources that make up the model's context.
import { z } from "zod";

const OnMissingSchema = z.enum(["skip", "error"]).default("error");

export const FileSourceSchema = z.strictObject({
  type: z.literal("file"),
  id: z.string().min(1).optional(),
  path: z.string().min(1),
  on_missing: OnMissingSchema,
});

export const ComputedFileSourceSchema = z.strictObject({
  type: z.literal("computed_file"),
  id: z.string().min(1).optional(),
  generator: z.strictObject({
    command: z.array(z.string()).min(1),
    timeout_ms: z.number().int().positive().default(30_000),
  }),
  output_path: z.string().min(1),
  on_missing: OnMissingSchema,
});

export const JournalSourceSchema = z.strictObject({
  type: z.literal("journal"),
  id: z.string().min(1).optional(),
  /** At most this many iterations shown; past it the window jumps to the last half (context/window-rule.ts). */
  max_iterations: z.number().int().positive().optional(),
  /** At most this many tokens of conversation (user messages included); past it the window jumps to half. */
  max_tokens: z.number().int().positive().optional(),
});

export const ContextSourceSchema = z.discriminatedUnion("type", [
  FileSourceSchema,
  ComputedFileSourceSchema,
  JournalSourceSchema,
]);

export const ContextConfigSchema = z.strictObject({
  sources: z.array(ContextSourceSchema).min(1),
});

export type FileSource = z.infer<typeof FileSourceSchema>;
export type ComputedFileSource = z.infer<typeof ComputedFileSourceSchema>;
export type JournalSource = z.infer<typeof JournalSourceSchema>;
export type ContextSource = z.infer<typeof ContextSourceSchema>;
export type ContextConfig = z.infer<typeof ContextConfigSchema>;
