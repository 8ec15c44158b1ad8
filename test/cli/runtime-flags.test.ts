// The V8 flags of a long run: the optimizing compiler and the scavenger's helper thread held off and given back, V8's defaults around every compile, and a user's own choice of either left alone.
import { afterEach, beforeEach, expect, it, vi } from "vitest";

const set = vi.hoisted(() => ({ flags: [] as string[] }));
vi.mock("node:v8", async (original) => ({ ...(await original<typeof import("node:v8")>()), setFlagsFromString: (flags: string) => set.flags.push(flags) }));

/** The module afresh (its state is the process's): NODE_OPTIONS is read when it loads. */
async function runtimeFlags(nodeOptions?: string): Promise<typeof import("../../src/cli/runtime-flags.js")> {
  vi.resetModules();
  if (nodeOptions === undefined) vi.stubEnv("NODE_OPTIONS", "");
  else vi.stubEnv("NODE_OPTIONS", nodeOptions);
  return import("../../src/cli/runtime-flags.js");
}

beforeEach(() => {
  set.flags = [];
});

afterEach(() => {
  vi.unstubAllEnvs();
});

const HELD = "--semi-space-growth-factor=2 --no-turbofan --no-parallel-scavenge";
const DEFAULTS = "--semi-space-growth-factor=2 --turbofan --parallel-scavenge";

it("holds the optimizing compiler and the scavenger's helper thread off from the first hold to the last release, once each way", async () => {
  const { holdLoopFlags } = await runtimeFlags();
  const outer = holdLoopFlags();
  const inner = holdLoopFlags();
  expect(set.flags).toEqual([HELD]);
  inner();
  inner();
  expect(set.flags).toEqual([HELD]);
  outer();
  expect(set.flags).toEqual([HELD, DEFAULTS]);
  outer();
  expect(set.flags).toEqual([HELD, DEFAULTS]);
});

it("compiles against a code cache under V8's defaults while the compiler is held, and holds it again after, a failed compile included", async () => {
  const { holdLoopFlags, withDefaultFlags } = await runtimeFlags();
  const release = holdLoopFlags();
  set.flags = [];
  expect(withDefaultFlags(() => set.flags.slice())).toEqual([DEFAULTS]);
  expect(set.flags).toEqual([DEFAULTS, HELD]);
  expect(() =>
    withDefaultFlags(() => {
      throw new Error("rejected");
    }),
  ).toThrow("rejected");
  expect(set.flags).toEqual([DEFAULTS, HELD, DEFAULTS, HELD]);
  release();
  set.flags = [];
  // Nothing held: nothing to set around a compile.
  expect(withDefaultFlags(() => 7)).toBe(7);
  expect(set.flags).toEqual([]);
});

it("keeps the young generation bounded through a hold and its release", async () => {
  const { boundYoungGeneration, holdLoopFlags, withDefaultFlags } = await runtimeFlags();
  boundYoungGeneration();
  const release = holdLoopFlags();
  withDefaultFlags(() => undefined);
  release();
  withDefaultFlags(() => undefined);
  expect(set.flags).toEqual([
    "--semi-space-growth-factor=1 --turbofan --parallel-scavenge",
    "--semi-space-growth-factor=1 --no-turbofan --no-parallel-scavenge",
    DEFAULTS,
    "--semi-space-growth-factor=1 --no-turbofan --no-parallel-scavenge",
    "--semi-space-growth-factor=1 --turbofan --parallel-scavenge",
    DEFAULTS,
    "--semi-space-growth-factor=1 --turbofan --parallel-scavenge",
  ]);
});

it.each(["--no-opt", "--turbofan", "--max-opt=2", "--jitless", "--no_turbofan", "--max-old-space-size=512 --lite-mode"])("leaves the compiler to a user whose NODE_OPTIONS choose it, and holds the scavenger's thread: %s", async (choice) => {
  const { boundYoungGeneration, holdLoopFlags, withDefaultFlags } = await runtimeFlags(choice);
  const release = holdLoopFlags();
  release();
  expect(set.flags).toEqual(["--semi-space-growth-factor=2 --no-parallel-scavenge", "--semi-space-growth-factor=2 --parallel-scavenge"]);
  set.flags = [];
  boundYoungGeneration();
  withDefaultFlags(() => undefined);
  expect(set.flags).toEqual(["--semi-space-growth-factor=1 --parallel-scavenge", "--semi-space-growth-factor=2 --parallel-scavenge", "--semi-space-growth-factor=1 --parallel-scavenge"]);
});

it.each(["--parallel-scavenge", "--no-parallel-scavenge", "--single-threaded-gc", "--single_threaded", "--predictable"])("leaves the scavenger to a user whose NODE_OPTIONS choose it, and holds the compiler: %s", async (choice) => {
  const { holdLoopFlags } = await runtimeFlags(choice);
  holdLoopFlags()();
  expect(set.flags).toEqual(["--semi-space-growth-factor=2 --no-turbofan", "--semi-space-growth-factor=2 --turbofan"]);
});

it("changes nothing for a loop whose user chose both the compiler and the scavenger", async () => {
  const { boundYoungGeneration, holdLoopFlags, withDefaultFlags } = await runtimeFlags("--no-opt --single-threaded-gc");
  const release = holdLoopFlags();
  release();
  expect(set.flags).toEqual([]);
  boundYoungGeneration();
  withDefaultFlags(() => undefined);
  expect(set.flags).toEqual(["--semi-space-growth-factor=1", "--semi-space-growth-factor=2", "--semi-space-growth-factor=1"]);
});

it("holds it for a user whose NODE_OPTIONS name other flags", async () => {
  const { holdLoopFlags } = await runtimeFlags("--max-old-space-size=512 --trace-opt --optimize-for-size");
  holdLoopFlags()();
  expect(set.flags).toEqual([HELD, DEFAULTS]);
});
