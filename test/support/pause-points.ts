// Drives the engine's named pause points (src/pause-point.ts) from a test: pause processes at a line, wait, let them go.
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PausePoint } from "../../src/pause-point.js";
import { waitFor } from "../e2e/harness.js";

/** A point as DELTA_TEST_PAUSE_AT names it, with an optional detail (`journal-append:ACTION_RESULT`). */
export type PauseSpec = PausePoint | `${PausePoint}:${string}`;

export interface PauseGate {
  /** The environment that makes a `delta` process stop at `point` and wait on this gate. */
  env: Record<string, string>;
  /** Resolves with the pids of the first `count` processes that stopped at the point. */
  reached(count?: number, timeoutMs?: number): Promise<number[]>;
  /** Lets every process stopped (or yet to stop) at the point go on. */
  open(): void;
}

/** One gate per group of processes that should stop at `point` and be released together; its files live in a new folder under `root`. */
export function pauseGate(point: PauseSpec, root: string): PauseGate {
  const dir = mkdtempSync(join(root, "pause-"));
  const suffix = ".reached";
  const pids = (): number[] => readdirSync(dir).filter((name) => name.startsWith(`${point}.`) && name.endsWith(suffix)).map((name) => Number(name.slice(point.length + 1, -suffix.length)));
  return {
    env: { DELTA_TEST_PAUSE_AT: point, DELTA_TEST_PAUSE_DIR: dir },
    async reached(count = 1, timeoutMs = 20_000) {
      await waitFor(() => pids().length >= count, timeoutMs, `${count} process(es) paused at ${point}`);
      return pids();
    },
    open() {
      writeFileSync(join(dir, `${point}.go`), "");
    },
  };
}
