// Gathers many small pieces of output (one per journal event) into writes of about 64 KB: a system call per chunk, not per event.
const CHUNK_CHARS = 64 * 1024;

interface GatheredOutput {
  write(text: string): void;
  /** Writes what is gathered; call once at the end. */
  flush(): void;
}

export function gatherOutput(out: (text: string) => void): GatheredOutput {
  let pieces: string[] = [];
  let gathered = 0;
  const flush = (): void => {
    if (gathered === 0) return;
    out(pieces.join(""));
    pieces = [];
    gathered = 0;
  };
  return {
    write(text) {
      pieces.push(text);
      gathered += text.length;
      if (gathered >= CHUNK_CHARS) flush();
    },
    flush,
  };
}
