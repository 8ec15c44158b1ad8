// A fork's lineage as `show` and the HTML report print it beside its ENGINE_START: the run, iteration and seq it was made from.
import type { EventOf } from "../journal/events.js";

/** `, forked from run R at iteration N (seq S there)`, or nothing for an ENGINE_START that is not a fork's. */
export function forkedFromText(event: EventOf<"ENGINE_START">): string {
  const from = event.forked_from;
  return from === undefined ? "" : `, forked from run ${from.run_id} at iteration ${from.iteration} (seq ${from.seq} there)`;
}
