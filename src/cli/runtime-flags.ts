// The V8 flags a long run sets once it has started: the young generation held at its first size, the optimizing compiler and the scavenger's helper thread held off while a run's loop runs, V8's defaults back around every compile against a code cache.
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
// The scavenger's helper thread. V8 splits each scavenge of the young generation into one task per
// megabyte of its capacity, plus one, run on as many threads: two for the 1 MB semi-spaces held
// above. While the loop runs, the machine's other cores are busy with what the engine waits on (the
// tool it just started, a local model server), so the second thread must first be scheduled and the
// main thread waits for it: in alternating 60-turn runs on 2 cores the median gap between model
// requests was 15.07 → 14.58 ms with one scavenger thread (9 runs each; 16.02 → 15.58 in 7 others),
// CPU a turn unchanged (17.29 against 17.27 ms). Start-up, whose other core is idle, keeps both.
//
// Every flag is set back to V8's default around each compile against a code cache and each cache
// written (run-bundle.ts); a flag set to its default leaves V8's flag hash as it was.
import { setFlagsFromString } from "node:v8";

const userFlags = `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`;
/** A flag the user gave Node that decides the optimizing compiler (`--no-opt`, `--max-opt=2`, `--jitless`…): then it is theirs to keep. */
const userDecidesCompiler = /--(no[-_])?(turbofan|opt|max[-_]opt|jitless|lite[-_]mode)\b/.test(userFlags);
/** A flag the user gave Node that decides the scavenger's threads (`--parallel-scavenge`, `--single-threaded-gc`…). */
const userDecidesScavenger = /--(no[-_])?(parallel[-_]scavenge|single[-_]threaded([-_]gc)?|predictable)\b/.test(userFlags);

/** Whether a loop's hold changes any flag: not when the user's flags chose both. */
const loopHoldsFlags = !(userDecidesCompiler && userDecidesScavenger);

let youngBounded = false;
let loopHolds = 0;

/** The flags of the current state; V8's defaults when nothing is held. */
function flags(defaults = false): string {
  const looping = loopHolds > 0 && !defaults;
  const held = [`--semi-space-growth-factor=${youngBounded && !defaults ? 1 : 2}`];
  if (!userDecidesCompiler) held.push(`--${looping ? "no-" : ""}turbofan`);
  if (!userDecidesScavenger) held.push(`--${looping ? "no-" : ""}parallel-scavenge`);
  return held.join(" ");
}

function changed(): boolean {
  return youngBounded || (loopHolds > 0 && loopHoldsFlags);
}

export function boundYoungGeneration(): void {
  youngBounded = true;
  setFlagsFromString(flags());
}

/**
 * Turns the optimizing compiler and the scavenger's helper thread off until the returned release
 * (idempotent); each stays as Node was started when its flags chose it (`--no-opt`, `--turbofan`,
 * `--parallel-scavenge`… in its arguments or NODE_OPTIONS). Holds nest: V8's defaults come back
 * when the last one is released.
 */
export function holdLoopFlags(): () => void {
  loopHolds += 1;
  if (loopHolds === 1 && loopHoldsFlags) setFlagsFromString(flags());
  let released = false;
  return () => {
    if (released) return;
    released = true;
    loopHolds -= 1;
    if (loopHolds === 0 && loopHoldsFlags) setFlagsFromString(flags());
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
