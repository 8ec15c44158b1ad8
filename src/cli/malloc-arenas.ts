// glibc's malloc held to two arenas in the engine's own process: set by the launcher (bin/delta.js, read by sh), taken back out of the environment before any child starts.
//
// glibc gives a thread that finds the arenas in use one of its own, up to eight per core, each a
// 64 MB reservation touched here and there. Node's process has a dozen threads (V8's workers,
// libuv's pool) and forks a tool every turn, copying the page tables of every mapping each time.
// With two arenas a long run's process kept 176 mappings instead of 185, and in alternating runs
// on 2 cores its CPU a turn was lower by 4–5 % (medians of 8: 17.25 → 16.21 ms) and the median gap
// between model requests shorter in each of 12 pairs (by 2.7 % at the median). glibc reads the
// variable once, at its first allocation, so the launcher sets it before Node starts; the tools,
// hooks and servers the engine starts see the environment as the user set it. A user's own
// MALLOC_ARENA_MAX, or an arena_max in GLIBC_TUNABLES, is left alone by the launcher, and so here.

/** Set by the launcher beside MALLOC_ARENA_MAX, to the value it gave it, when the user had chosen none. */
const LAUNCHER_MARK = "DELTA_LAUNCHER_MALLOC_ARENAS";

/** Called once as the CLI starts, before any child process: MALLOC_ARENA_MAX is back as the user left it (unset). */
export function takeLauncherMallocArenas(env: NodeJS.ProcessEnv = process.env): void {
  const set = env[LAUNCHER_MARK];
  if (set === undefined) return;
  delete env[LAUNCHER_MARK];
  if (env.MALLOC_ARENA_MAX === set) delete env.MALLOC_ARENA_MAX;
}
