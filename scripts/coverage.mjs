// npm run coverage [test files…]: src/'s coverage by npm test, in the test processes and in every delta process they start, as one report.
// npm test's projects (unit, e2e) run under vitest's V8 coverage; the delta processes the e2e tests spawn write NODE_V8_COVERAGE files,
// mapped back to src/ through dist/*.map by c8; the two are merged by source location (istanbul-lib-coverage).
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import libCoverage from "istanbul-lib-coverage";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "coverage");
const spawnedRaw = join(out, "spawned-raw");
/** A dependency's command run by this Node with room for the whole suite's coverage (hundreds of processes' worth). */
const tool = (script) => ["--max-old-space-size=8192", join(root, "node_modules", script)];

function run(command, args, env = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  return result.status ?? 1;
}

// Only the built engine's scripts: a test worker's own file (vitest's, or src/ evaluated in it) is counted by vitest.
// A file cut short is a process that ended while it wrote its coverage (the tests kill -9 runs): left out, and counted.
function keepBuiltEngineOnly() {
  const dist = pathToFileURL(join(root, "dist")).href + "/";
  let cut = 0;
  for (const name of readdirSync(spawnedRaw)) {
    const file = join(spawnedRaw, name);
    let raw;
    try {
      raw = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      cut += 1;
      rmSync(file);
      continue;
    }
    raw.result = raw.result.filter((script) => script.url.startsWith(dist));
    if (raw.result.length === 0) rmSync(file);
    else writeFileSync(file, JSON.stringify(raw));
  }
  if (cut > 0) console.error(`coverage: ${cut} delta process(es) ended while writing their coverage (a killed run); left out`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(spawnedRaw, { recursive: true });
if (run("node", ["scripts/build.mjs"]) !== 0) process.exit(1);
// A thread per test file here, not npm test's threads kept from file to file: kept, vitest's V8 coverage counted fewer of
// src/'s branches (86.08 % of 11,236 against 88.44 % of 11,688, the same tests).
const testStatus = run(
  "node",
  [...tool("vitest/vitest.mjs"), "run", "--project", "unit", "--project", "e2e", "--poolOptions.threads.isolate=true", "--coverage.enabled", "--coverage.provider=v8", "--coverage.reporter=json",
    `--coverage.reportsDirectory=${join(out, "in-process")}`, "--coverage.include=src/**", "--coverage.reportOnFailure", ...process.argv.slice(2)],
  { NODE_V8_COVERAGE: spawnedRaw },
);
keepBuiltEngineOnly();
run("node", [...tool("c8/bin/c8.js"), "report", "--merge-async", "--temp-directory", spawnedRaw, "--reporter", "json", "--report-dir", join(out, "spawned")]);

// The bundles also map to the dependencies they carry: only src/ is counted.
const sourceFolder = join(root, "src") + "/";
const merged = libCoverage.createCoverageMap({});
for (const part of ["in-process", "spawned"]) {
  const files = Object.entries(JSON.parse(readFileSync(join(out, part, "coverage-final.json"), "utf8")));
  merged.merge(Object.fromEntries(files.filter(([file]) => file.startsWith(sourceFolder))));
}
const summary = merged.getCoverageSummary().toJSON();
writeFileSync(join(out, "summary.json"), JSON.stringify({ files: merged.files().length, ...summary }, null, 2) + "\n");
console.log(`coverage of src/ (${merged.files().length} files; in-process and spawned, merged):`);
for (const kind of ["lines", "statements", "functions", "branches"]) {
  const { covered, total, pct } = summary[kind];
  console.log(`  ${kind.padEnd(10)} ${String(pct).padStart(6)} %  (${covered} of ${total})`);
}
if (testStatus !== 0) console.log(`the tests failed (exit ${testStatus}): the figures count what ran`);
process.exit(testStatus);
