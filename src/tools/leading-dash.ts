// Which parameters may take a model's value that starts with "-": refused where the value would begin an argv entry a program may read as an option, allowed where the template says how it is read (CONTRACT §6).
import type { WordPlace } from "./shell-script.js";

/** How a parameter's value starting with "-" is taken: refused (an ERROR observation before the tool runs), or allowed, and why. */
export type LeadingDash = { refused: true } | { refused: false; because: string };

const REFUSED: LeadingDash = { refused: true };

export function allowedBecause(because: string): LeadingDash {
  return { refused: false, because };
}

/** An option written whole, which may take the next argv entry as its argument: `-m`, `-am`, `--file` (not `--file=x`, `-` or `--`). */
const OPTION_WORD = /^(-[^-\s=][^\s=]*|--[^\s=]+)$/;

/** A value a program reads as a number, never as an option: -5, -0.25, -.5, -1e3. */
const NUMBER = /^-(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export function isNegativeNumber(value: string): boolean {
  return NUMBER.test(value);
}

/** One placeholder of a shell script, judged by the words of its command before it. */
export function shellOccurrence(place: WordPlace): LeadingDash {
  if (!place.beginsWord) return allowedBecause("inside a word of the template");
  if (place.afterRedirect) return allowedBecause("the file of a redirection");
  if (place.firstWord) return allowedBecause("the command's name");
  if (place.afterDoubleDash) return allowedBecause("after -- in the template");
  if (place.afterOption !== null) return allowedBecause(`the argument of ${place.afterOption} in the template`);
  return REFUSED;
}

/** Each parameter's occurrences in an argv (a literal, or a whole parameter value), judged by the entries before them. */
export function argvOccurrences(argv: readonly ({ literal: string } | { param: string })[]): Map<string, LeadingDash[]> {
  const found = new Map<string, LeadingDash[]>();
  let afterDoubleDash = false;
  let previous: string | null = null;
  for (const entry of argv) {
    if ("literal" in entry) {
      if (entry.literal === "--") afterDoubleDash = true;
      previous = entry.literal;
      continue;
    }
    const rule = afterDoubleDash ? allowedBecause("after -- in the template") : previous !== null && OPTION_WORD.test(previous) ? allowedBecause(`the argument of ${previous} in the template`) : REFUSED;
    found.set(entry.param, [...(found.get(entry.param) ?? []), rule]);
    previous = null;
  }
  return found;
}

/** A parameter's rule from all its occurrences: refused where any one is; else allowed, for every reason that applied. */
export function combined(occurrences: readonly LeadingDash[]): LeadingDash {
  if (occurrences.length === 0 || occurrences.some((rule) => rule.refused)) return REFUSED;
  const reasons = [...new Set(occurrences.map((rule) => (rule.refused ? "" : rule.because)))];
  return allowedBecause(reasons.join("; "));
}

/** As `delta tool expand` shows it. */
export function describeLeadingDash(rule: LeadingDash): string {
  return rule.refused ? "refused" : `allowed: ${rule.because}`;
}
