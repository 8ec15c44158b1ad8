// A body's pieces gathered into few writes: each write through node:http costs its stream machinery, whatever its size.

/** Small pieces are copied together into runs of at most this many bytes. */
const RUN_BYTES = 64 << 10;
/**
 * A piece of at least half a run is passed on as it is. So are the runs this makes, on a second pass: a run closed because
 * the next piece did not fit holds more than half a run, and one closed by a larger piece stands alone before it again.
 */
const WHOLE_PIECE_BYTES = RUN_BYTES / 2;

/**
 * The same bytes in the same order, pieces under 32 KiB joined into runs of at most 64 KiB: a long conversation's thousand
 * messages go out in a few writes, never one copy the size of the body, and runs made once (wire-json.ts) pass through again uncopied.
 */
export function coalescePieces(pieces: readonly Buffer[]): Buffer[] {
  const runs: Buffer[] = [];
  let run: Buffer[] = [];
  let runBytes = 0;
  const close = (): void => {
    if (run.length === 1) runs.push(run[0]!);
    else if (run.length > 1) runs.push(Buffer.concat(run, runBytes));
    run = [];
    runBytes = 0;
  };
  for (const piece of pieces) {
    if (piece.length >= WHOLE_PIECE_BYTES) {
      close();
      runs.push(piece);
      continue;
    }
    if (runBytes + piece.length > RUN_BYTES) close();
    run.push(piece);
    runBytes += piece.length;
  }
  close();
  return runs;
}
