// The append's check of each event type: the code the build generates (dist/delta-journal-checks.cjs) judges an event as
// the check compiled from sources does, and whatever it passes the reader's schema parses back as exactly that event.
import fc from "fast-check";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventCheck } from "../../src/journal/event-checks.js";
import { eventJsonSchemas } from "../../src/journal/event-json-schemas.js";
import { JournalEventSchema } from "../../src/journal/events.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Check = NonNullable<ReturnType<typeof eventCheck>>;

const require = createRequire(import.meta.url);
const dist = join(import.meta.dirname, "../../dist");
const generated = (): { eventCheck: typeof eventCheck } => require(join(dist, "run-bundle.cjs")).requireBundle(join(dist, "delta-journal-checks.cjs"));
const SCHEMAS = eventJsonSchemas();
const TYPES = Object.keys(SCHEMAS);

/** The smallest event a JSON Schema describes: each required field at the first value its schema allows. */
function minimal(schema: Record<string, unknown>): Json {
  if ("const" in schema) return schema.const as Json;
  if (Array.isArray(schema.enum)) return schema.enum[0] as Json;
  if (Array.isArray(schema.anyOf)) return minimal(schema.anyOf[0] as Record<string, unknown>);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(((schema.required ?? []) as string[]).map((key) => [key, minimal(properties[key]!)]));
    }
    case "array":
      return [];
    case "string":
      return typeof schema.pattern === "string" ? patternExample(schema.pattern) : "x".repeat(Number(schema.minLength ?? 1));
    case "integer":
    case "number":
      return "exclusiveMinimum" in schema ? Number(schema.exclusiveMinimum) + 1 : Number(schema.minimum ?? 0);
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return {};
  }
}

function patternExample(pattern: string): string {
  const hex = /\[0-9a-f\]\{(\d+)\}/.exec(pattern);
  if (pattern.startsWith("^sha256:") && hex) return `sha256:${"0".repeat(Number(hex[1]))}`;
  if (hex) return "0".repeat(Number(hex[1]));
  return "a";
}

/** What the golden journals normalise, as the engine writes it. */
const UNNORMALISED: Record<string, Json> = { "<duration_ms>": 12, "<pid>": 4242, "<trace_id>": "0af7651916cd43dd8448eb211c80319c" };

/** Every event written to the golden journals, as the writer is given them (the chain's hash, normalised there, left out). */
function goldenEvents(): Record<string, Json>[] {
  const root = join(import.meta.dirname, "../golden/expected");
  return readdirSync(root).flatMap((name) => {
    let text: string;
    try {
      text = readFileSync(join(root, name, "journal.jsonl"), "utf8");
    } catch {
      return [];
    }
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const { hash: _hash, ...event } = JSON.parse(line, (_key, value: Json) => (typeof value === "string" && Object.hasOwn(UNNORMALISED, value) ? UNNORMALISED[value] : value)) as Record<string, Json>;
        return event;
      });
  });
}

const FIXED: Record<string, Json>[] = [...TYPES.map((type) => minimal(SCHEMAS[type]!) as Record<string, Json>), ...goldenEvents()];

/** Sets (or with `undefined`, removes) the field at `path` of a copy of `value`. */
function withField(value: Json, path: readonly string[], field: Json | undefined): Json {
  if (path.length === 0) return field ?? null;
  if (typeof value !== "object" || value === null) return value;
  const copy: Record<string, Json> | Json[] = Array.isArray(value) ? [...value] : { ...value };
  const [head, ...rest] = path as [string, ...string[]];
  const next = withField((copy as Record<string, Json>)[head] ?? {}, rest, field);
  if (rest.length === 0 && field === undefined) delete (copy as Record<string, Json>)[head];
  else (copy as Record<string, Json>)[head] = next;
  return copy;
}

/** The paths of every field of `value`, nested ones included. */
function paths(value: Json, prefix: string[] = []): string[][] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, field]) => [[...prefix, key], ...paths(field, [...prefix, key])]);
}

/** An event of the fixed ones, changed at one place: a field removed, given another value, or one added. */
const changedEvent = fc
  .tuple(fc.constantFrom(...FIXED), fc.nat(), fc.oneof(fc.constant(undefined), fc.jsonValue() as fc.Arbitrary<Json>, fc.constantFrom<Json>(-1, 0, 0.5, 2 ** 53, "", [], {})), fc.boolean())
  .map(([event, at, field, addOne]) => {
    const places = paths(event);
    if (addOne || places.length === 0) {
      const place = places.filter((path) => typeof path.reduce<Json>((v, key) => (v as Record<string, Json>)[key]!, event) === "object")[at % Math.max(1, places.length)] ?? [];
      return withField(event, [...place, "surprise"], field ?? 1) as Record<string, Json>;
    }
    return withField(event, places[at % places.length]!, field) as Record<string, Json>;
  });

function verdict(check: Check, event: unknown): { ok: boolean; first: unknown } {
  const ok = check(event);
  return { ok, first: ok ? null : check.errors?.[0] };
}

describe("the journal's event checks", () => {
  it("know every event type of the journal's schema, and no other", () => {
    expect(TYPES.sort()).toEqual(JournalEventSchema.options.map((schema) => schema.shape.type.value).sort());
    expect(eventCheck("NOT_AN_EVENT")).toBeUndefined();
    expect(eventCheck("constructor")).toBeUndefined();
    expect(generated().eventCheck("NOT_AN_EVENT")).toBeUndefined();
    expect(generated().eventCheck("constructor")).toBeUndefined();
  });

  it("pass the smallest event of each type and every event of the golden journals", () => {
    for (const event of FIXED) {
      const type = String(event.type);
      expect(verdict(eventCheck(type)!, event), JSON.stringify(event)).toEqual({ ok: true, first: null });
      expect(verdict(generated().eventCheck(type)!, event), JSON.stringify(event)).toEqual({ ok: true, first: null });
    }
  });

  it("generated at build time: the same verdict and the same first problem as compiled from sources", () => {
    fc.assert(
      fc.property(changedEvent, (event) => {
        const type = String(event.type);
        const fromSources = eventCheck(type);
        const built = generated().eventCheck(type);
        if (fromSources === undefined) {
          expect(built).toBeUndefined();
          return;
        }
        // A validator ajv compiled carries its schema; generated code is a plain function.
        expect(fromSources).toHaveProperty("schema");
        expect(built).not.toHaveProperty("schema");
        expect(verdict(built!, event)).toEqual(verdict(fromSources, event));
      }),
      { numRuns: 400 },
    );
  });

  it("pass only what the reader's schema parses back as the very event written", () => {
    const seen = { passed: 0, refused: 0 };
    fc.assert(
      fc.property(changedEvent, (event) => {
        const check = eventCheck(String(event.type));
        if (check === undefined || !check(event)) {
          seen.refused += 1;
          return;
        }
        seen.passed += 1;
        const line = JSON.stringify(event);
        const read = JournalEventSchema.safeParse(JSON.parse(line));
        expect(read.success).toBe(true);
        expect(JSON.parse(JSON.stringify(read.data))).toEqual(JSON.parse(line));
      }),
      { numRuns: 400 },
    );
    // Both sides of the check were met, not one.
    expect(seen.passed).toBeGreaterThan(20);
    expect(seen.refused).toBeGreaterThan(20);
  });

  it("refuse a field the schema does not name, a number out of its range, NaN and a value of another type", () => {
    const thought = FIXED.find((event) => event.type === "THOUGHT" && event.tool_calls !== undefined && (event.tool_calls as Json[]).length > 0)!;
    const check = generated().eventCheck("THOUGHT")!;
    const refused = (event: unknown): unknown => (check(event) ? null : check.errors?.[0]);
    expect(refused({ ...thought, surprise: 1 })).toMatchObject({ instancePath: "", keyword: "additionalProperties", params: { additionalProperty: "surprise" } });
    expect(refused({ ...thought, iteration: 0 })).toMatchObject({ instancePath: "/iteration", keyword: "exclusiveMinimum" });
    expect(refused({ ...thought, iteration: 1.5 })).toMatchObject({ instancePath: "/iteration", keyword: "type" });
    expect(refused({ ...thought, duration_ms: Number.NaN })).toMatchObject({ instancePath: "/duration_ms" });
    expect(refused({ ...thought, duration_ms: Number.POSITIVE_INFINITY })).toMatchObject({ instancePath: "/duration_ms" });
    expect(refused({ ...thought, tool_calls: [{ id: "c", name: "n" }] })).toMatchObject({ instancePath: "/tool_calls/0", keyword: "required" });
    expect(refused({ ...thought, hash: "sha256:xyz" })).toMatchObject({ instancePath: "/hash", keyword: "pattern" });
  });
});
