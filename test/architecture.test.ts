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
  "terminal-text",
  "journal",
  "process",
  "trace",
  "conversation",
  "store",
  "tools",
  "hooks",
  "llm",
  "context",
  "agent",
  "loop",
  "run",
  "report",
  "sessions",
  "serve",
  "cli",
];

/** The programs' entry points (the two command lines, and the forwarder a proxied sandbox runs): the only places that print to stdout or end the process. */
const ENTRY_ROOMS = new Set(["cli"]);
const ENTRY_FILES = new Set(["src/sessions/main.ts", "src/process/sandbox-forwarder.ts"]);

const SRC = resolve("src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

function roomOf(file: string): string {
  const [first] = relative(SRC, file).split(sep);
  return first!.replace(/\.ts$/, "");
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

  it("keeps journal, secrets and errors free of anything above them, and store free of run", () => {
    const reaches = (room: string, above: string[]): string[] =>
      files.filter((file) => roomOf(file) === room).flatMap((file) => importsOf(file).filter((target) => above.includes(roomOf(target))).map((target) => `${relative(".", file)} → ${relative(".", target)}`));
    expect(reaches("journal", FLOORS.slice(FLOORS.indexOf("journal") + 1))).toEqual([]);
    expect(reaches("secrets", FLOORS.filter((room) => room !== "secrets" && room !== "errors"))).toEqual([]);
    expect(reaches("errors", FLOORS.filter((room) => room !== "errors"))).toEqual([]);
    expect(reaches("store", ["run", "cli", "report"])).toEqual([]);
  });

  it("keeps the loop behind its ports: no Node built-in, no process runner, no run files, lease or run paths of its own", () => {
    const loopFiles = files.filter((file) => roomOf(file) === "loop");
    expect(loopFiles.map((file) => relative(SRC, file))).toContain(join("loop", "run-loop.ts"));
    const forbidden = ["process", join("store", "lease"), join("store", "run-files.ts"), join("store", "run-dir.ts")].map((path) => join(SRC, path));
    const reached = loopFiles.flatMap((file) => {
      const text = readFileSync(file, "utf8");
      const builtIns = [...text.matchAll(/\bfrom\s+"(node:[^"]+)"/g)].map((match) => `${relative(".", file)} → ${match[1]}`);
      const inside = importsOf(file)
        .filter((target) => forbidden.some((path) => target.replace(/\.js$/, ".ts") === path || target.startsWith(`${path}${sep}`)))
        .map((target) => `${relative(".", file)} → ${relative(".", target)}`);
      return [...builtIns, ...inside];
    });
    expect(reached).toEqual([]);
  });

  it("keeps the loop out of report: reading a run never drives one", () => {
    const intoLoop = files
      .filter((file) => roomOf(file) === "report")
      .flatMap((file) => importsOf(file).filter((target) => roomOf(target) === "loop").map((target) => `${relative(".", file)} → ${relative(".", target)}`));
    expect(intoLoop).toEqual([]);
  });

  it("keeps context free of llm: the context knows no provider", () => {
    const reached = files.filter((file) => roomOf(file) === "context").flatMap((file) => importsOf(file).filter((target) => roomOf(target) === "llm").map((target) => `${relative(".", file)} → ${relative(".", target)}`));
    expect(reached).toEqual([]);
  });

  it("keeps report free of run: reading a run never needs the engine that runs one", () => {
    const reached = files.filter((file) => roomOf(file) === "report").flatMap((file) => importsOf(file).filter((target) => roomOf(target) === "run").map((target) => `${relative(".", file)} → ${relative(".", target)}`));
    expect(reached).toEqual([]);
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
