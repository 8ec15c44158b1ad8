// Types of big-journal.mjs for what TypeScript tests import from it.
export interface GrownJournal {
  bytes: number;
  iterations: number;
  windowMoves: number;
  periodIterations: number;
}
export function growJournal(runDir: string, targetBytes: number): GrownJournal;
