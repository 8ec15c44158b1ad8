// The journal's events as JSON Schemas, one per type, derived from their zod schemas: what the append's check is made of (event-checks.ts from sources, scripts/journal-checks.mjs at build time).
import { z } from "zod";
import { JournalEventSchema } from "./events.js";

/**
 * Each event type's schema as zod outputs it: an object may hold only the fields its schema names (a loose one
 * excepted), so an event the check passes is the event a reader parses back from its line, not one zod would trim.
 */
export function eventJsonSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(JournalEventSchema.options.map((schema) => [schema.shape.type.value, z.toJSONSchema(schema, { io: "output" })]));
}

/** ajv's options for the check: strict about the schemas it is given; the first problem, named by its keyword and parameters (no message text: less code). */
export const EVENT_CHECK_OPTIONS = { strict: true, allowUnionTypes: true, logger: false, messages: false } as const;
