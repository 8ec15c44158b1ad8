// V8's old generation collected as a long run goes, so the run's memory stays flat in its length.
//
// With the young generation held at its first size (runtime-flags.ts), what a turn still holds at a scavenge (its
// context, its request) survives two of them and is promoted, and V8 runs a full collection only when the old
// generation reaches a limit far above what a run keeps alive: a windowed agent's heap grew by ~33 KB of such garbage
// a turn (48 MB after 1,000 turns, 12 MB of it alive; peak RSS 70 MB at 60 turns, 109 MB at 2,000). A full collection
// whenever the heap has grown by GROWTH_BYTES since the last holds it near what is alive, for a few milliseconds every
// hundred-odd turns; a short run never has one. V8 keeps the pages a collection empties, so the old generation's
// high-water mark is what a run's RSS keeps: with 8 MiB measured from a first look taken before V8's own first
// collection, a windowed 1,000-iteration run peaked at 82–90 MB; with 4 MiB from the smallest size seen, at 79–81 MB.
// (Looked at every 100 ms, 78 MB, but then a run of a few dozen turns pays the ~20 ms of a first collection it does
// not need; every 500 ms, a run shorter than a second is never looked at twice.) V8 gives no other way to ask for
// one: `gc` is exposed for a moment and the flag set back, so the flags any later compile sees are those the code
// cache was made under (runtime-flags.ts).
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** How much the heap may grow past the smallest size seen since the last full collection (or since the first look) before the next one. */
export const GROWTH_BYTES = 4 * 2 ** 20;
/** How often the heap's size is looked at (a few microseconds each). */
const CHECK_EVERY_MS = 500;

interface Heap {
  used(): number;
  collect(): void;
}

/**
 * Returns the check to run now and then: the first look takes the heap's size, then a full collection whenever the heap
 * is GROWTH_BYTES above what the last one left. V8 runs full collections of its own too (the first one soon after the
 * bundle has loaded): the floor follows the smallest size seen, or a first look taken before V8's collection would let
 * the heap grow twice the bound.
 */
export function oldGenerationBound(heap: Heap): () => boolean {
  let floor: number | null = null;
  return () => {
    const used = heap.used();
    if (floor === null || used - floor < GROWTH_BYTES) {
      floor = Math.min(floor ?? used, used);
      return false;
    }
    heap.collect();
    floor = heap.used();
    return true;
  };
}

/**
 * Starts the bound for this process, looked at every CHECK_EVERY_MS while the process has other work (the timer never
 * holds it open). `gc` is made on the first collection: exposing it makes a V8 context (~10 ms), which only a run long
 * enough to need a collection pays.
 */
export function boundOldGeneration(): void {
  let collect: (() => void) | undefined;
  const check = oldGenerationBound({ used: () => getHeapStatistics().used_heap_size, collect: () => (collect ??= exposedGc())() });
  setInterval(check, CHECK_EVERY_MS).unref();
}

function exposedGc(): () => void {
  setFlagsFromString("--expose-gc");
  try {
    return runInNewContext("gc") as () => void;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
