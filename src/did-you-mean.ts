// "Did you mean …?": the closest of the known words to a mistyped one, when one is close enough to be a slip of the fingers.
import { distance } from "fastest-levenshtein";

/** An edit distance at most this, and most of the word left unchanged, reads as a typo; more is another word. */
const MAX_EDITS = 3;
const MIN_SIMILARITY = 0.5;

/**
 * The known word the typed one most likely meant, or undefined: one that differs only in case, else the nearest by
 * edits (ties: the first in `known`), else the one word that starts with it (`list` → `list-runs`).
 */
export function closestWord(typed: string, known: readonly string[]): string | undefined {
  if (typed === "" || known.length === 0) return undefined;
  const sameCase = known.find((word) => word.toLowerCase() === typed.toLowerCase() && word !== typed);
  if (sameCase !== undefined) return sameCase;
  let best: { word: string; edits: number } | undefined;
  for (const word of known) {
    if (word === typed) continue;
    const edits = distance(typed.toLowerCase(), word.toLowerCase());
    const similarity = 1 - edits / Math.max(typed.length, word.length);
    if (edits <= MAX_EDITS && similarity >= MIN_SIMILARITY && (best === undefined || edits < best.edits)) best = { word, edits };
  }
  if (best !== undefined) return best.word;
  const extending = known.filter((word) => typed.length >= 2 && word !== typed && word.startsWith(typed));
  return extending.length === 1 ? extending[0] : undefined;
}

/** ` Did you mean X?` to append to a message, or nothing when no known word is close. */
export function didYouMean(typed: string, known: readonly string[], shown: (word: string) => string = (word) => word): string {
  const word = closestWord(typed, known);
  return word === undefined ? "" : ` Did you mean ${shown(word)}?`;
}
