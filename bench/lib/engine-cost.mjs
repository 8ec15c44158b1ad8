// The engine's own cost per iteration: from a reply leaving the model server to the next request arriving, minus the tool's time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { median } from "./stats.mjs";

/**
 * Per iteration k (1-based, up to the last but one): the gap between model requests k and k+1 less
 * the duration_ms of the tool calls iteration k journaled. The instant server answers in well under
 * a millisecond, so what remains is the engine: reading the journal, building the context, sending,
 * journaling the reply, spawning the tool and journaling its result.
 */
export function engineCosts(runDir, arrivals) {
  const toolMs = new Map();
  for (const line of readFileSync(join(runDir, "journal.jsonl"), "utf8").split("\n")) {
    if (!line.includes('"ACTION_RESULT"')) continue;
    const event = JSON.parse(line);
    toolMs.set(event.iteration, (toolMs.get(event.iteration) ?? 0) + event.duration_ms);
  }
  return arrivals.slice(1).map((arrival, index) => arrival - arrivals[index] - (toolMs.get(index + 1) ?? 0));
}

/** The median of the 10 costs around iteration `k`. */
export function costAround(costs, k) {
  return median(costs.slice(Math.max(0, k - 6), k + 4));
}
