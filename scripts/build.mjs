// Bundles the two CLIs, their launcher helper, the MCP SDK (client and server), ajv and the OpenTelemetry SDK into dist/, one CommonJS file each, and writes the JSON Schemas editors read and the boxes' seccomp programs.
//
// dist/ is never emptied: each file is replaced whole (scripts/write-in-place.mjs), so a `delta` started from this
// folder while it builds (`npm install -g .` runs the build in the clone) finds every file it needs. What the build
// no longer writes is removed after: old bundles, code caches of bundles that are gone, a crashed build's leftovers.
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { AJV_BUNDLE, AJV_ENTRY, MCP_SDK_BUNDLE, MCP_SDK_ENTRY, MCP_SERVER_SDK_BUNDLE, MCP_SERVER_SDK_ENTRY, OTEL_SDK_BUNDLE, OTEL_SDK_ENTRY, bundleCli } from "./bundle.mjs";
import { writeAjvMeta } from "./ajv-meta.mjs";
import { writeJournalChecks } from "./journal-checks.mjs";
import { writeJsonSchemas } from "./json-schemas.mjs";
import { writeSeccompPrograms } from "./seccomp-filter.mjs";

const written = (
  await Promise.all([
    bundleCli("src/cli/main.ts", "delta", { sdkApart: true, keepNames: false }),
    // Loaded by the delta bundle only for agents with MCP servers.
    bundleCli(MCP_SDK_ENTRY, MCP_SDK_BUNDLE),
    // Loaded by the delta bundle only for `delta mcp serve`.
    bundleCli(MCP_SERVER_SDK_ENTRY, MCP_SERVER_SDK_BUNDLE),
    // Loaded by the delta bundle only for runs with an output schema.
    bundleCli(AJV_ENTRY, AJV_BUNDLE),
    // Beside it: the meta-schema checks ajv generates (src/agent/meta-validator.ts loads them).
    writeAjvMeta(),
    // Loaded by the delta bundle at a run's first append: the journal's checks, generated from its events' schemas.
    writeJournalChecks(),
    // Loaded by the delta bundle only when spans are exported (OTEL_* set, or `delta export`).
    bundleCli(OTEL_SDK_ENTRY, OTEL_SDK_BUNDLE),
    bundleCli("src/sessions/main.ts", "delta-sessions", { keepNames: false }),
    // Run with node inside a box whose network is a host list: carries its connections to the engine's proxy.
    bundleCli("src/process/sandbox/forwarder.ts", "sandbox-forwarder", { stamp: false }),
    // The launcher helper is the one file compiled without a cache: small, and it is what reads the cache.
    bundleCli("src/cli/run-bundle.ts", "run-bundle", { stamp: false }),
    writeJsonSchemas().then(() => []),
    // The seccomp program of a box without the host's network, one per architecture (dist/seccomp/<arch>.bpf).
    writeSeccompPrograms(),
  ])
).flat();

removeStale("dist", new Set(written.map((file) => basename(file))));

/** Removes the files of dist/ this build did not write, and the code caches of bundles it did not write. */
function removeStale(dist, current) {
  for (const name of readdirSync(dist)) {
    if (name === ".cache" || current.has(name) || inUse(name)) continue;
    rmSync(join(dist, name), { force: true, recursive: true });
  }
  // A cache is named <bundle>-<first 16 of its stamp>-<node>-<arch>.v8 (src/cli/run-bundle.ts).
  const stamps = [...current].filter((name) => name.endsWith(".cjs")).map((name) => `${basename(name, ".cjs")}-${stampOf(join(dist, name)).slice(0, 16)}-`);
  let caches = [];
  try {
    caches = readdirSync(join(dist, ".cache"));
  } catch {
    return;
  }
  for (const name of caches) {
    if (!stamps.some((prefix) => name.startsWith(prefix)) && !inUse(name)) rmSync(join(dist, ".cache", name), { force: true });
  }
}

function stampOf(file) {
  return /^\/\/# delta-build=([0-9a-f]{64})/.exec(readFileSync(file, "utf8").slice(0, 100))?.[1] ?? "";
}

/** A temporary file of a process still writing it (another build, or a delta writing its code cache). */
function inUse(name) {
  const pid = /\.(\d+)\.(tmp|mjs)$/.exec(name)?.[1];
  if (pid === undefined) return false;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
}
