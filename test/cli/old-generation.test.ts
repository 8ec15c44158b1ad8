// The old generation's bound: a full collection once the heap has grown GROWTH_BYTES past what the last one left (or the smallest size seen), never before.
import { expect, it } from "vitest";
import { GROWTH_BYTES, oldGenerationBound } from "../../src/cli/old-generation.js";

it("collects once the heap is GROWTH_BYTES above what the last collection left, measuring from the first look until then", () => {
  const MiB = 2 ** 20;
  let used = 30 * MiB;
  const collections: number[] = [];
  // A collection leaves what is alive: 12 MiB, then 13 MiB.
  const alive = [12 * MiB, 13 * MiB];
  const check = oldGenerationBound({ used: () => used, collect: () => (collections.push(used), (used = alive[collections.length - 1]!)) });
  // The first look only takes the size: a process's loading is not garbage to collect.
  expect(check()).toBe(false);
  used += GROWTH_BYTES - 1;
  expect(check()).toBe(false);
  used += 1;
  expect(check()).toBe(true);
  expect(collections).toEqual([30 * MiB + GROWTH_BYTES]);
  // From the 12 MiB left, not from the 30 MiB of the first look.
  used = 12 * MiB + GROWTH_BYTES - 1;
  expect(check()).toBe(false);
  used += 1;
  expect(check()).toBe(true);
  used = 13 * MiB + GROWTH_BYTES / 2;
  expect(check()).toBe(false);
  expect(collections).toHaveLength(2);
});

it("measures from the smallest size seen: a collection V8 ran on its own lowers the floor a first look took", () => {
  const MiB = 2 ** 20;
  let used = 18 * MiB;
  let collections = 0;
  const check = oldGenerationBound({ used: () => used, collect: () => ((collections += 1), (used = 13 * MiB)) });
  expect(check()).toBe(false);
  // V8's own full collection, between two looks.
  used = 13 * MiB;
  expect(check()).toBe(false);
  used = 13 * MiB + GROWTH_BYTES - 1;
  expect(check()).toBe(false);
  used += 1;
  expect(check()).toBe(true);
  expect(collections).toBe(1);
});
