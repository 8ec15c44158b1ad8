#!/usr/bin/env node
// Launcher for the `delta` command: runs the bundled CLI through the code cache (src/cli/run-bundle.ts).
const path = require("node:path");
const { runBundle } = require("../dist/run-bundle.cjs");

const command = process.argv[2];
runBundle(path.join(__dirname, "../dist/delta.cjs"), { warmsCache: command === "run" || command === "continue" });
