// Runs the original Delta Engine left in a workspace (layout "1.0" to "1.2"): recognised by their metadata.json, listed, never continued.
import { z } from "zod";
import { readRunFile } from "../safe-open.js";
import { RunStatusSchema } from "../journal/events.js";

/** Its metadata.json: `task` and `agent_ref` where this engine writes `initial_message` and `agent_home`; its journal wraps events in `payload`. */
const OriginalMetadataSchema = z.looseObject({
  run_id: z.string(),
  agent_ref: z.string(),
  task: z.string(),
  status: RunStatusSchema,
  start_time: z.string(),
  end_time: z.string().optional(),
  iterations_completed: z.number().int().nonnegative().optional(),
});
export type OriginalRun = z.infer<typeof OriginalMetadataSchema>;

/** The run's metadata when the original engine made it; null for a run of this engine (or no readable metadata). */
export function readOriginalRun(paths: { metadata: string }): OriginalRun | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readRunFile(paths.metadata));
  } catch {
    return null;
  }
  return originalRunOf(raw);
}

/** The same, from metadata.json already parsed as JSON. */
export function originalRunOf(raw: unknown): OriginalRun | null {
  if (typeof raw === "object" && raw !== null && "agent_home" in raw) return null;
  const parsed = OriginalMetadataSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** Whether a `.delta/VERSION` is this engine's layout or one the original engine wrote ("1.0", "1.2"), whose workspaces this engine reads and adds runs to. */
export function isKnownLayout(version: string, current: string): boolean {
  return version === current || /^1\.\d+$/.test(version);
}
