// A body's pieces joined into few writes: the same bytes in the same order, pieces under 32 KiB in runs of at most 64 KiB, a larger piece as it is.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { coalescePieces } from "../../../src/llm/transport/coalesce.js";

const RUN = 64 << 10;
const WHOLE = RUN / 2;

describe("coalescePieces", () => {
  it("keeps every byte in order, joins small pieces into runs of at most 64 KiB and passes a larger piece, and any run it made, through uncopied", () => {
    const piece = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: WHOLE - 2, max: WHOLE + 2 }), fc.integer({ min: RUN - 2, max: RUN + 2 }), fc.integer({ min: 0, max: 40_000 })).map((size) => Buffer.alloc(size, size % 251));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (pieces) => {
        const runs = coalescePieces(pieces);
        expect(Buffer.concat(runs).equals(Buffer.concat(pieces))).toBe(true);
        for (const run of runs) if (!pieces.some((p) => p === run)) expect(run.length).toBeLessThanOrEqual(RUN);
        for (const big of pieces.filter((p) => p.length >= WHOLE)) expect(runs).toContain(big);
        // Two neighbouring runs of small pieces could not have been one.
        for (let i = 1; i < runs.length; i += 1) if (runs[i - 1]!.length < WHOLE && runs[i]!.length < WHOLE) expect(runs[i - 1]!.length + runs[i]!.length).toBeGreaterThan(RUN);
        // What it made passes through a second time as it is: the same buffers, nothing copied.
        const again = coalescePieces(runs);
        expect(again).toHaveLength(runs.length);
        again.forEach((run, index) => expect(run).toBe(runs[index]));
      }),
    );
  });

  it("sends a 2,000-message conversation's pieces as a few writes", () => {
    const pieces = Array.from({ length: 4_001 }, (_, i) => Buffer.from(i % 2 === 0 ? `{"role":"tool","content":"result ${i}"}` : ","));
    const runs = coalescePieces(pieces);
    expect(runs.length).toBe(Math.ceil(Buffer.concat(pieces).length / RUN));
    expect(Buffer.concat(runs).toString()).toBe(Buffer.concat(pieces).toString());
  });
});
