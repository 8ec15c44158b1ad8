// The tool definition as users write it in agent.yaml or an imported file (spec 2.2.6).
import { z } from "zod";
import { SandboxPolicySchema } from "../process/sandbox/policy-schema.js";

/** OpenAI function names: letters, digits, `_` and `-`, at most 64 characters. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** Parameter names double as `${name}` placeholders and JSON property names. */
const PARAMETER_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const InjectAsSchema = z.enum(["argument", "stdin", "option"]);

/** What running a tool's call again does: `idempotent`, the same as running it once (for the same idempotency key). */
export const ToolEffectsSchema = z.enum(["idempotent"], { message: "the only value is idempotent (a call run twice with the same DELTA_IDEMPOTENCY_KEY has the effect of one); leave effects out for any other tool" });
export type ToolEffects = z.infer<typeof ToolEffectsSchema>;
export type InjectAs = z.infer<typeof InjectAsSchema>;

const ToolParameterSchema = z.strictObject({
  name: z.string().regex(PARAMETER_NAME_PATTERN, {
    message: "must start with a letter or _ and contain only letters, digits and _ (at most 64 characters)",
  }),
  type: z.literal("string", { message: "only type: string is supported" }).default("string"),
  description: z.string().optional(),
  required: z.boolean().optional(),
  inject_as: InjectAsSchema.optional(),
  option_name: z.string().min(1).optional(),
  default: z.string().optional(),
  position: z.number().int().nonnegative().optional(),
  raw: z.boolean().optional(),
  /** A value starting with `-` may stand as an argument of its own (by default it is refused, an ERROR observation, unless the template shows how it is read). */
  allow_leading_dash: z.boolean().optional(),
  /** Deprecated: refusing is the default now. Still loads, with a note. */
  reject_leading_dash: z.boolean().optional(),
});
export type ToolParameterDefinition = z.infer<typeof ToolParameterSchema>;

export const ToolDefinitionSchema = z
  .strictObject({
    name: z.string().regex(TOOL_NAME_PATTERN, {
      message: "tool names must match ^[a-zA-Z0-9_-]{1,64}$ (the OpenAI function-name rule); use letters, digits, _ or -",
    }),
    description: z.string().optional(),
    exec: z.string().min(1).optional(),
    shell: z.string().min(1).optional(),
    command: z.array(z.string()).min(1).optional(),
    parameters: z.array(ToolParameterSchema).optional(),
    stdin: z.string().regex(PARAMETER_NAME_PATTERN, { message: "must be a parameter name" }).optional(),
    timeout_ms: z.number().int().positive().optional(),
    /** Replaces the agent's sandbox for this tool. */
    sandbox: SandboxPolicySchema.optional(),
    /** false: the program need not exist when the agent loads (the run itself creates it). */
    check_program: z.boolean().optional(),
    /**
     * `idempotent`: running the call twice with the same DELTA_IDEMPOTENCY_KEY has the effect of running it once, so a
     * call a crash left in doubt runs again on `continue` instead of the model being told it may or may not have run.
     */
    effects: ToolEffectsSchema.optional(),
  })
  .refine((tool) => [tool.exec, tool.shell, tool.command].filter((mode) => mode !== undefined).length === 1, {
    message: "Tool must specify exactly one of: exec, shell, or command",
  });
export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;
