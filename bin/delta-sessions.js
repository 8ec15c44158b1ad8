#!/usr/bin/env node
// Launcher for the `delta-sessions` command: runs the bundled sessions CLI through the code cache (src/cli/run-bundle.ts).
const path = require("node:path");
const { runBundle } = require("../dist/run-bundle.cjs");

runBundle(path.join(__dirname, "../dist/delta-sessions.cjs"), { warmsCache: true });
