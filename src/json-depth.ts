// The nesting depth of a JSON text, found by one linear scan without parsing it: a bound checked before anything walks the value recursively.

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = ["{", "["] as const;

/** The deepest nesting of `[` and `{` outside strings; once it passes `stopPast`, the depth reached then (the scan stops). */
export function jsonDepth(text: string, stopPast = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > deepest) deepest = depth;
      if (deepest > stopPast) return deepest;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return deepest;
}

/**
 * Whether `text` nests deeper than `limit`. A text with no more than `limit` brackets that open cannot, and most
 * replies have a few: those are counted by the string's own search, and only a text with more is scanned.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let openers = 0;
  for (const opener of OPENERS) {
    for (let at = text.indexOf(opener); at !== -1; at = text.indexOf(opener, at + 1)) {
      openers += 1;
      if (openers > limit) return jsonDepth(text, limit) > limit;
    }
  }
  return false;
}
