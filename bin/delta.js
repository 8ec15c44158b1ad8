#!/bin/sh
":" //; case "${NODE_OPTIONS-}" in *-ca*) ;; *) if [ -n "${NODE_EXTRA_CA_CERTS-}" ]; then DELTA_DEFERRED_CA_CERTS=$NODE_EXTRA_CA_CERTS; export DELTA_DEFERRED_CA_CERTS; unset NODE_EXTRA_CA_CERTS; fi ;; esac
":" //; case "${MALLOC_ARENA_MAX+set}:${GLIBC_TUNABLES-}" in set:*|*arena_max*) ;; *) MALLOC_ARENA_MAX=2; DELTA_LAUNCHER_MALLOC_ARENAS=2; export MALLOC_ARENA_MAX DELTA_LAUNCHER_MALLOC_ARENAS ;; esac
":" //; exec node "$0" "$@"
// Launcher for the `delta` command, read by sh first and then by Node.
//
// As a shell script (how `delta` and `npx delta` start it) the three lines above move
// NODE_EXTRA_CA_CERTS aside, unless NODE_OPTIONS chooses a CA store itself, and start Node on this
// file: Node would otherwise parse that certificate bundle at every start (about 90 ms on a machine
// with a full bundle). The engine gives the variable back to its child processes and trusts the
// certificates for HTTPS model calls (src/llm/transport/deferred-ca.ts). They also hold glibc's
// malloc to two arenas in Node's process, unless the user chose a number (MALLOC_ARENA_MAX, or
// arena_max in GLIBC_TUNABLES); the engine takes the variable back out before any child starts
// (src/cli/malloc-arenas.ts). To Node, those lines are strings and comments; it runs the bundled
// CLI through the code cache (src/cli/run-bundle.ts).
const path = require("node:path");
const { runBundle } = require("../dist/run-bundle.cjs");

const command = process.argv[2];
const runs = command === "run" || command === "continue";
runBundle(path.join(__dirname, "../dist/delta.cjs"), { warmsCache: runs, boundsYoungGeneration: runs });
