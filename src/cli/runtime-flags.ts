// The V8 flags a long run sets once it has started: the young generation held at its first size, the optimizing compiler held off while a run's loop runs, V8's defaults back around every compile against a code cache.
//
// The young generation. A run keeps its journal's events and messages alive, so each scavenge finds
// survivors, and V8 doubles the young generation's semi-spaces up to 16 MB each: about 22 MB of a
// 500-iteration run's peak RSS that buys nothing, as the survivors go on to the old generation
// anyway. A growth factor of 1 keeps the semi-spaces at their first size. `--max-semi-space-size`
// would do the same but is read only at start-up, where any V8 flag costs ~100 ms: V8 rejects the
// code cache of Node's own modules and of our bundle when its flags differ from those the cache was
// made under. The growth factor is read at every scavenge, so it is set once the bundle is loaded.
//
// The optimizing compiler. A turn runs a little of a great many functions (the HTTP client, zod,
// the journal, the context, the io/ records), each a few times a turn; V8 still finds many of them
// hot as turns go by and compiles them again with TurboFan, on a thread whose CPU the run pays,
// into code and compiler zones the run then holds. Held off from the loop's start (alternating runs
// against the build before, 2 cores): per iteration 0.8–1.8 ms of CPU less on 30-turn runs; 81 → 73
// MB of peak RSS and 6.5 → 5.9 ms of CPU a turn on 1,000-turn ones, 83 → 74 MB on 5,000; a 700-turn
// run whose every request is the whole conversation takes the same CPU either way. The work before
// the loop keeps it: what start-up makes hot is compiled and serves the loop, and a `continue` reads
// a 100 MB journal in 0.9 s with it, 1.9 s without. Held off from the bundle's load instead, the
// loop lost what start-up had compiled (5.7 ms of CPU an iteration, against 4.7).
//
// Every flag is set back to V8's default around each compile against a code cache and each cache
// written (run-bundle.ts); a flag set to its default leaves V8's flag hash as it was.
import { setFlagsFromString } from "node:v8";

/** A flag the user gave Node that decides the optimizing compiler (`--no-opt`, `--max-opt=2`, `--jitless`…): then it is theirs to keep. */
const USER_CHOICE = /--(no[-_])?(turbofan|opt|max[-_]opt|jitless|lite[-_]mode)\b/;
const userDecidesCompiler = USER_CHOICE.test(`${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`);

let youngBounded = false;
let compilerHolds = 0;

/** The flags of the current state; V8's defaults when nothing is held. */
function flags(defaults = false): string {
  const young = `--semi-space-growth-factor=${youngBounded && !defaults ? 1 : 2}`;
  return userDecidesCompiler ? young : `${young} --${compilerHolds > 0 && !defaults ? "no-" : ""}turbofan`;
}

function changed(): boolean {
  return youngBounded || (compilerHolds > 0 && !userDecidesCompiler);
}

export function boundYoungGeneration(): void {
  youngBounded = true;
  setFlagsFromString(flags());
}

/**
 * Turns the optimizing compiler off until the returned release (idempotent), unless Node was
 * started with a choice of its own (`--no-opt`, `--turbofan`… in its arguments or NODE_OPTIONS).
 * Holds nest: the compiler comes back when the last one is released.
 */
export function holdOptimizingCompiler(): () => void {
  compilerHolds += 1;
  if (compilerHolds === 1 && !userDecidesCompiler) setFlagsFromString(flags());
  let released = false;
  return () => {
    if (released) return;
    released = true;
    compilerHolds -= 1;
    if (compilerHolds === 0 && !userDecidesCompiler) setFlagsFromString(flags());
  };
}

/** Runs `compile` under V8's default flags, so the code cache it reads or makes matches every other start's. */
export function withDefaultFlags<T>(compile: () => T): T {
  if (!changed()) return compile();
  setFlagsFromString(flags(true));
  try {
    return compile();
  } finally {
    setFlagsFromString(flags());
  }
}
