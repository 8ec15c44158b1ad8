// The shapes a hook run produces: what its process did, its outcome for the engine and its record for io/hooks/.
import { z } from "zod";
import { HookNameSchema } from "./schema.js";

const HookOutcomeSchema = z.discriminatedUnion("kind", [
  /** No hook is configured at this point. */
  z.object({ kind: z.literal("none") }),
  /** The run goes on; `output` is stdout when it was a JSON object, `warning` says what failed open. */
  z.object({
    kind: z.literal("continue"),
    output: z.record(z.string(), z.unknown()).optional(),
    warning: z.string().optional(),
  }),
  /** The hook refused, or a pre_* hook failed and failed closed. */
  z.object({ kind: z.literal("block"), reason: z.string() }),
]);
export type HookOutcome = z.infer<typeof HookOutcomeSchema>;

export const HookRecordSchema = z.object({
  hook: HookNameSchema,
  started_at: z.string(),
  /** The argv after ${AGENT_HOME} / ${CWD} expansion. */
  command: z.array(z.string()),
  cwd: z.string(),
  /** The JSON text written to the hook's stdin. */
  stdin: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number().nonnegative(),
  outcome: HookOutcomeSchema,
});
export type HookRecord = z.infer<typeof HookRecordSchema>;

