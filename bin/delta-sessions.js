#!/usr/bin/env node
// Launcher for the `delta-sessions` command: runs the bundled sessions CLI.
import "../dist/delta-sessions.js";
