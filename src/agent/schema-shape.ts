// Finds the shapes of an output schema that would make checking an answer never end or exhaust the stack: a loop of subschemas that each check the same value again ($ref, allOf…), none describing a part of it; nesting past a bound.
type Json = Record<string, unknown>;

/** Keywords whose subschemas check a part of the value (a property, an item, a key) or are kept for reference ($defs). */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
const SCHEMA_ONES = ["additionalProperties", "items", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"];
const SCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/** Of those, the ones that check the very same value again. */
const SAME_VALUE_ONES = new Set(["not", "if", "then", "else"]);
const SAME_VALUE_LISTS = new Set(["allOf", "anyOf", "oneOf"]);
const SAME_VALUE_MAPS = new Set(["dependentSchemas", "dependencies"]);

/** Deeper than this, a schema is refused: no hand-written schema nests so far, and checking it would cost the stack. */
export const MAX_SCHEMA_DEPTH = 100;

type SchemaShapeProblem = { kind: "too-deep"; at: string } | { kind: "loop"; path: string[] };

/** The first problem found: a schema nested past MAX_SCHEMA_DEPTH, or a loop of same-value steps (as the pointers it passes); null when none. */
export function schemaShapeProblem(root: Json): SchemaShapeProblem | null {
  const nodes = new Map<string, Json>();
  const stack: { node: unknown; at: string; depth: number }[] = [{ node: root, at: "#", depth: 0 }];
  while (stack.length > 0) {
    const { node, at, depth } = stack.pop()!;
    if (!isObject(node) || nodes.has(at)) continue;
    if (depth > MAX_SCHEMA_DEPTH) return { kind: "too-deep", at };
    nodes.set(at, node);
    for (const [key, child] of subschemas(node, at)) stack.push({ node: child, at: key, depth: depth + 1 });
  }
  return loopAmong(nodes);
}

/** Each subschema of `node` with its pointer. */
function subschemas(node: Json, at: string): [string, unknown][] {
  const found: [string, unknown][] = [];
  for (const key of SCHEMA_MAPS) {
    const map = node[key];
    if (isObject(map)) for (const [name, child] of Object.entries(map)) found.push([`${at}/${key}/${escape(name)}`, child]);
  }
  for (const key of SCHEMA_ONES) if (isObject(node[key])) found.push([`${at}/${key}`, node[key]]);
  for (const key of SCHEMA_LISTS) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((child, index) => found.push([`${at}/${key}/${index}`, child]));
  }
  return found;
}

/** Where checking a value at `at` goes on to check the same value. */
function sameValueSteps(node: Json, at: string): string[] {
  const steps: string[] = [];
  if (typeof node.$ref === "string" && node.$ref.startsWith("#")) steps.push(normalized(node.$ref));
  for (const key of SAME_VALUE_ONES) if (isObject(node[key])) steps.push(`${at}/${key}`);
  for (const key of SAME_VALUE_LISTS) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((_, index) => steps.push(`${at}/${key}/${index}`));
  }
  for (const key of SAME_VALUE_MAPS) {
    const map = node[key];
    if (isObject(map)) for (const [name, child] of Object.entries(map)) if (isObject(child)) steps.push(`${at}/${key}/${escape(name)}`);
  }
  return steps;
}

/** A cycle of same-value steps, found by a depth-first walk kept on an explicit stack. */
function loopAmong(nodes: Map<string, Json>): SchemaShapeProblem | null {
  const done = new Set<string>();
  for (const start of nodes.keys()) {
    if (done.has(start)) continue;
    const path: string[] = [];
    const onPath = new Set<string>();
    const stack: { at: string; steps: string[] | null }[] = [{ at: start, steps: null }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.steps === null) {
        path.push(top.at);
        onPath.add(top.at);
        const node = nodes.get(top.at);
        top.steps = node === undefined ? [] : sameValueSteps(node, top.at);
      }
      const next = top.steps.shift();
      if (next === undefined) {
        stack.pop();
        path.pop();
        onPath.delete(top.at);
        done.add(top.at);
        continue;
      }
      if (onPath.has(next)) return { kind: "loop", path: [...path.slice(path.indexOf(next)), next] };
      if (!done.has(next)) stack.push({ at: next, steps: null });
    }
  }
  return null;
}

/** A `#…` reference as the pointers above are written: "#" for the root, tokens escaped as in a JSON pointer. */
function normalized(ref: string): string {
  const pointer = ref.slice(1);
  if (pointer === "" || pointer === "/") return "#";
  const tokens = pointer.split("/").slice(1).map((token) => escape(unescapeToken(safeDecode(token))));
  return `#/${tokens.join("/")}`;
}

function escape(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function unescapeToken(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

function safeDecode(token: string): string {
  try {
    return decodeURIComponent(token);
  } catch {
    return token;
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
