// The hooks.yaml schema: the eight lifecycle hook points, each an argv command with a timeout.
import { z } from "zod";

const HOOK_NAMES = [
  "pre_llm_request",
  "post_llm_response",
  "pre_tool_execution",
  "post_tool_execution",
  "on_error",
  "on_run_end",
  "on_iteration_start",
  "on_iteration_end",
] as const;

export const HookNameSchema = z.enum(HOOK_NAMES);
export type HookName = z.infer<typeof HookNameSchema>;

const HookDefinitionSchema = z.strictObject({
  command: z.array(z.string()).min(1),
  timeout_ms: z.number().int().positive().default(30_000),
});

export const HooksConfigSchema = z.strictObject({
  pre_llm_request: HookDefinitionSchema.optional(),
  post_llm_response: HookDefinitionSchema.optional(),
  pre_tool_execution: HookDefinitionSchema.optional(),
  post_tool_execution: HookDefinitionSchema.optional(),
  on_error: HookDefinitionSchema.optional(),
  on_run_end: HookDefinitionSchema.optional(),
  on_iteration_start: HookDefinitionSchema.optional(),
  on_iteration_end: HookDefinitionSchema.optional(),
});
export type HooksConfig = z.infer<typeof HooksConfigSchema>;
