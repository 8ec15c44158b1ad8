#!/usr/bin/env node
// Launcher for the `delta` command: runs the bundled CLI.
import "../dist/delta.js";
