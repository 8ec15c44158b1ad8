// The journal hash chain's own cost per turn: the engine's chain module (bundled from src/ with esbuild) hashing a real run's lines as its writer does.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

/**
 * Microseconds the chain adds to each turn of the run whose journal is at `journal` (`turns` model calls): every
 * line's body hashed and its hash appended, as the writer does on append, timed over `reps` passes; one value per pass.
 */
export async function chainCostPerTurn(repo, scratch, journal, turns, reps) {
  const bundled = join(scratch, "chain-bench.mjs");
  await build({ entryPoints: [join(repo, "src/journal/chain.ts")], bundle: true, platform: "node", format: "esm", outfile: bundled, logLevel: "silent" });
  try {
    const { EMPTY_ANCHOR, hashedLine, splitHashedLine } = await import(pathToFileURL(bundled).href);
    const bodies = readFileSync(journal, "utf8").split("\n").filter(Boolean).map((line) => splitHashedLine(Buffer.from(line))?.body.toString("utf8") ?? line);
    const perTurn = [];
    for (let rep = 0; rep < reps; rep += 1) {
      const started = performance.now();
      let previous = EMPTY_ANCHOR;
      for (const body of bodies) previous = hashedLine(body, previous).hash;
      perTurn.push(((performance.now() - started) * 1000) / turns);
    }
    return { perTurnUs: perTurn, lines: bodies.length, bytes: bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0) };
  } finally {
    rmSync(bundled, { force: true });
  }
}

