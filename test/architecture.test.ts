// The house rules of src/: rooms import only rooms on lower floors, and only the CLIs write to stdout or exit.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

/** Lowest first: a room may import only rooms before it (docs/architecture.md draws the same floors). */
const FLOORS = [
  "errors",
  "engine-version",
  "zod-config",
  "random-hex",
  "byte-size",
  "continue-command",
  "pause-point",
  "private-modes",
  "secrets",
  "fs-errors",
  "safe-open",
  "package-root",
  "launcher-helper",
  "terminal-text",
  "did-you-mean",
  "plural",
  "json-depth",
  "journal",
  "process",
  "trace",
  "conversation",
  "llm",
  "store",
  "tools",
  "hooks",
  "context",
  "agent",
  "loop",
  "run",
  "report",
  "sessions",
  "serve",
  "cli",
];

/** The parts of the architecture's picture and the rooms each holds: `ground` is every room below journal. */
const PARTS: Record<string, string[]> = {
  ground: FLOORS.slice(0, FLOORS.indexOf("journal")),
  journal: ["journal"],
  process: ["process"],
  conversation: ["conversation"],
  models: ["llm"],
  store: ["store"],
  tools: ["tools", "hooks"],
  context: ["context"],
  package: ["agent"],
  loop: ["loop"],
  run: ["run"],
  report: ["report", "trace"],
  face: ["cli", "sessions", "serve"],
};

/** Imports that must never exist, whatever the floors allow: [from part, to part, why]. */
const NEVER: [string, string, string][] = [
  ["journal", "models", "the journal knows no provider"],
  ["journal", "loop", "events know no loop"],
  ["journal", "store", "events know no files"],
  ["journal", "run", "events know no run"],
  ["journal", "context", "events know no context"],
  ["journal", "conversation", "events know no messages"],
  ["models", "loop", "a provider knows no run"],
  ["models", "run", "a provider knows no run"],
  ["models", "store", "a provider keeps no files"],
  ["models", "face", "nothing imports cli"],
  ["tools", "loop", "a process runner knows no run"],
  ["tools", "run", "a process runner knows no run"],
  ["loop", "face", "the engine never prints or exits"],
  ["loop", "run", "the loop knows no wiring"],
  ["loop", "store", "the loop is behind ports (in-memory journal)"],
  ["loop", "process", "the loop spawns nothing itself"],
  ["run", "face", "the engine never prints or exits"],
  ["context", "models", "context is provider-neutral"],
  ["context", "store", "context reads the journal, not files"],
  ["process", "store", "a process knows no run"],
  ["process", "run", "a process knows no run"],
  ["process", "loop", "a process knows no loop"],
  ["store", "run", "store does not import run"],
  ["store", "loop", "store does not import loop"],
  ["report", "loop", "a viewer never drives a run"],
  ["report", "run", "a viewer never drives a run"],
  ["report", "face", "nothing imports cli"],
  ["ground", "journal", "ground imports nothing above"],
  ["ground", "store", "ground imports nothing above"],
];

/** The programs' entry points (the two command lines, and the forwarder a proxied sandbox runs): the only places that print to stdout or end the process. */
const ENTRY_ROOMS = new Set(["cli"]);
const ENTRY_FILES = new Set(["src/sessions/main.ts", "src/process/sandbox/forwarder.ts"]);

const SRC = resolve("src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

function roomOf(file: string): string {
  const [first] = relative(SRC, file).split(sep);
  return first!.replace(/\.[jt]s$/, "");
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)"(\.{1,2}\/[^"]+)"/gm)].map((match) => resolve(dirname(file), match[1]!));
}

const files = sourceFiles(SRC);

/** Each strongly connected group of more than one file (or a file importing itself), found by Tarjan's algorithm, as a path back to its start. */
function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || graph.get(file)!.includes(file)) cycles.push([...group.reverse(), group[0]!]);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

describe("the house", () => {
  it("knows the floor of every room in src/", () => {
    const rooms = new Set(files.map(roomOf));
    expect([...rooms].filter((room) => !FLOORS.includes(room))).toEqual([]);
  });

  it("has no import from a lower room to a higher one", () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = roomOf(file);
      for (const target of importsOf(file)) {
        const to = roomOf(target);
        if (to !== from && FLOORS.indexOf(to) > FLOORS.indexOf(from)) upward.push(`${relative(".", file)} imports ${relative(".", target)} (${from} → ${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("keeps journal, secrets and errors free of anything above them", () => {
    const reaches = (room: string, above: string[]): string[] =>
      files.filter((file) => roomOf(file) === room).flatMap((file) => importsOf(file).filter((target) => above.includes(roomOf(target))).map((target) => `${relative(".", file)} → ${relative(".", target)}`));
    expect(reaches("journal", FLOORS.slice(FLOORS.indexOf("journal") + 1))).toEqual([]);
    expect(reaches("secrets", FLOORS.filter((room) => room !== "secrets" && room !== "errors"))).toEqual([]);
    expect(reaches("errors", FLOORS.filter((room) => room !== "errors"))).toEqual([]);
  });

  it("places every room in one part of the picture", () => {
    const placed = Object.values(PARTS).flat();
    expect(FLOORS.filter((room) => !placed.includes(room))).toEqual([]);
    expect(placed.length).toBe(new Set(placed).size);
  });

  it("has none of the imports the picture says must never exist", () => {
    const partOf = (room: string): string => Object.entries(PARTS).find(([, rooms]) => rooms.includes(room))![0];
    const broken = files.flatMap((file) =>
      importsOf(file).flatMap((target) => {
        const rule = NEVER.find(([from, to]) => from === partOf(roomOf(file)) && to === partOf(roomOf(target)));
        return rule === undefined ? [] : [`${relative(".", file)} → ${relative(".", target)}: ${rule[2]}`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it("keeps process/ free of providers: no model provider's or trace exporter's variable is named there", () => {
    const named = files
      .filter((file) => roomOf(file) === "process")
      .flatMap((file) => [...readFileSync(file, "utf8").matchAll(/\b(?:[A-Z]+_API_KEY|[A-Z]+_BASE_URL|DELTA_PROVIDER|DELTA_MODEL|OTEL_[A-Z_]+)\b/g)].map((match) => `${relative(".", file)}: ${match[0]}`));
    expect(named).toEqual([]);
  });

  it("keeps the loop behind its ports: no Node built-in", () => {
    const loopFiles = files.filter((file) => roomOf(file) === "loop");
    expect(loopFiles.map((file) => relative(SRC, file))).toContain(join("loop", "run-loop.ts"));
    const builtIns = loopFiles.flatMap((file) => [...readFileSync(file, "utf8").matchAll(/\bfrom\s+"(node:[^"]+)"/g)].map((match) => `${relative(".", file)} → ${match[1]}`));
    expect(builtIns).toEqual([]);
  });

  it("has no import cycle between files, type-only imports included", () => {
    const graph = new Map(files.map((file) => [file, importsOf(file).map((target) => target.replace(/\.js$/, ".ts"))]));
    expect(importCycles(graph).map((cycle) => cycle.map((file) => relative(".", file)).join(" → "))).toEqual([]);
  });

  it("writes to stdout and ends the process only from the command lines", () => {
    const offenders = files
      .filter((file) => !ENTRY_ROOMS.has(roomOf(file)) && !ENTRY_FILES.has(relative(".", file)))
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .map((line, index) => ({ line, index }))
          .filter(({ line }) => /\bprocess\.(stdout|exit\b|exitCode)|\bconsole\.(log|info)\b/.test(line) && !/^\s*(\/\/|\*)/.test(line))
          .map(({ index }) => `${relative(".", file)}:${index + 1}`),
      );
    expect(offenders).toEqual([]);
  });
});
