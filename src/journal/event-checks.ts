// The append's check of each event type, compiled by ajv from the events' JSON Schemas: what runs from sources. The build replaces this module with the same checks as code ajv generates (dist/delta-journal-checks.cjs, scripts/journal-checks.mjs), so a run neither compiles them nor runs zod on each append.
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { EVENT_CHECK_OPTIONS, eventJsonSchemas } from "./event-json-schemas.js";

/** Whether an event is one of its type as the journal writes it; when not, `errors` holds the first problem. */
interface EventCheck {
  (event: unknown): boolean;
  errors?: ErrorObject[] | null;
}

let schemas: Record<string, Record<string, unknown>> | undefined;
const compiled = new Map<string, EventCheck>();

/** The check of events of `type`, compiled on first use; undefined for a type the journal does not know. */
export function eventCheck(type: string): EventCheck | undefined {
  let check = compiled.get(type);
  if (check !== undefined) return check;
  schemas ??= eventJsonSchemas();
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (schema === undefined) return undefined;
  check = new Ajv2020(EVENT_CHECK_OPTIONS).compile(schema);
  compiled.set(type, check);
  return check;
}
