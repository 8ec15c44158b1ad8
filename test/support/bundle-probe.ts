// Which bundles of dist/ a delta process read: a probe preloaded with NODE_OPTIONS notes every .cjs file it reads.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PROBE = `const fs = require("node:fs"); const read = fs.readFileSync; const seen = new Set();
fs.readFileSync = function (file, ...rest) { if (typeof file === "string" && file.endsWith(".cjs")) seen.add(require("node:path").basename(file)); return read.call(this, file, ...rest); };
process.on("exit", () => fs.writeFileSync(process.env.BUNDLE_REPORT, JSON.stringify([...seen].sort())));
`;

/** The environment that makes a delta process note the bundles it reads (under `dir`, as `name`), and the reader of that note. */
export function bundleProbe(dir: string, name: string): { env: Record<string, string>; bundlesRead: () => string[] } {
  const probe = join(dir, "bundle-probe.cjs");
  const report = join(dir, `bundles-${name}.json`);
  writeFileSync(probe, PROBE);
  return {
    env: { BUNDLE_REPORT: report, NODE_OPTIONS: `--require ${probe}` },
    bundlesRead: () => JSON.parse(readFileSync(report, "utf8")) as string[],
  };
}
