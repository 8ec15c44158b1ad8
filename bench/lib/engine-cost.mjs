// The engine's own cost per iteration: from a reply leaving the model server to the next request arriving, minus the tool's time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { median } from "./stats.mjs";

/**
 * Per iteration k (1-based, up to the last but one): from the server sending reply k to request k+1
 * arriving, less the duration_ms of the tool calls iteration k journaled. What remains is the
 * engine: reading the reply, journaling it, spawning the tool and journaling its result, reading
 * the journal, building the context and sending the request (the server's own reading of a long
 * body is not in it).
 */
export function engineCosts(runDir, arrivals, replied) {
  const toolMs = new Map();
  for (const line of readFileSync(join(runDir, "journal.jsonl"), "utf8").split("\n")) {
    if (!line.includes('"ACTION_RESULT"')) continue;
    const event = JSON.parse(line);
    toolMs.set(event.iteration, (toolMs.get(event.iteration) ?? 0) + event.duration_ms);
  }
  return arrivals.slice(1).map((arrival, index) => arrival - replied[index] - (toolMs.get(index + 1) ?? 0));
}

/** The median of the 10 costs around iteration `k`. */
export function costAround(costs, k) {
  return median(costs.slice(Math.max(0, k - 6), k + 4));
}
