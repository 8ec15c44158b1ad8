// V8's young generation held at its first size for a long run, with V8's default flags back whenever code meets the code cache.
//
// A run keeps its journal's events and messages alive, so each scavenge finds survivors, and V8
// doubles the young generation's semi-spaces up to 16 MB each: about 22 MB of a 500-iteration
// run's peak RSS that buys nothing, as the survivors go on to the old generation anyway. A growth
// factor of 1 keeps the semi-spaces at their first size. `--max-semi-space-size` would do the same
// but is read only at start-up, where any V8 flag costs ~100 ms: V8 rejects the code cache of
// Node's own modules and of our bundle when its flags differ from those the cache was made under.
// The growth factor is read at every scavenge, so it is set once the bundle is loaded, and set back
// to V8's default around each compile against the cache and each cache written (run-bundle.ts).
import { setFlagsFromString } from "node:v8";

const BOUNDED = "--semi-space-growth-factor=1";
/** V8's default; a flag set to its default leaves V8's flag hash as it was. */
const DEFAULT = "--semi-space-growth-factor=2";

let bounded = false;

export function boundYoungGeneration(): void {
  setFlagsFromString(BOUNDED);
  bounded = true;
}

/** Runs `compile` under V8's default flags, so the code cache it reads or makes matches every other start's. */
export function withDefaultFlags<T>(compile: () => T): T {
  if (!bounded) return compile();
  setFlagsFromString(DEFAULT);
  try {
    return compile();
  } finally {
    setFlagsFromString(BOUNDED);
  }
}
