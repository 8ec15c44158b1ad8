// Zod schemas of what delta-sessions writes to disk and prints: metadata, history lines, results.
import { z } from "zod";

export const SESSION_ID_PATTERN = /^sess_[a-f0-9]{12}$/;

const SessionStatusSchema = z.enum(["active", "terminated"]);

/** metadata.json: the fields of design 2.3.3 plus the argv the session runs. */
export const SessionMetadataSchema = z.strictObject({
  session_id: z.string().regex(SESSION_ID_PATTERN),
  command: z.string().min(1),
  argv: z.array(z.string().min(1)).min(1),
  created_at: z.iso.datetime(),
  last_executed_at: z.iso.datetime().nullable(),
  status: SessionStatusSchema,
  work_dir: z.string().min(1),
  execution_count: z.number().int().nonnegative(),
});

/** One line of history.log per exec. */
export const HistoryEntrySchema = z.strictObject({
  at: z.iso.datetime(),
  command: z.string(),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  ms: z.number().int().nonnegative(),
});

/** What `exec` prints: design 2.3.2 plus timed_out. */
export const ExecResultSchema = z.strictObject({
  stdout: z.string(),
  stderr: z.string(),
  exit_code: z.number().int().nullable(),
  execution_time_ms: z.number().int().nonnegative(),
  timed_out: z.boolean(),
});

export type SessionStatus = z.infer<typeof SessionStatusSchema>;
export type SessionMetadata = z.infer<typeof SessionMetadataSchema>;
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;
export type ExecResult = z.infer<typeof ExecResultSchema>;
