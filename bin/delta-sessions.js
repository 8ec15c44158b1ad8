#!/bin/sh
":" //; case "${NODE_OPTIONS-}" in *-ca*) ;; *) if [ -n "${NODE_EXTRA_CA_CERTS-}" ]; then DELTA_DEFERRED_CA_CERTS=$NODE_EXTRA_CA_CERTS; export DELTA_DEFERRED_CA_CERTS; unset NODE_EXTRA_CA_CERTS; fi ;; esac
":" //; exec node "$0" "$@"
// Launcher for the `delta-sessions` command, read by sh first and then by Node, like bin/delta.js:
// as a shell script it spares Node parsing NODE_EXTRA_CA_CERTS at every start (sessions make no
// TLS connections; the CLI gives the variable back to the shells it starts); to Node it runs the
// bundled sessions CLI through the code cache (src/cli/run-bundle.ts).
const path = require("node:path");
const { runBundle } = require("../dist/run-bundle.cjs");

runBundle(path.join(__dirname, "../dist/delta-sessions.cjs"), { warmsCache: true });
