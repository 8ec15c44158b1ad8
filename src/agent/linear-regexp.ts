// The regular-expression engine an output schema's `pattern`s run on: RE2 (re2js), whose matching takes time linear in the text, so no pattern and no answer can hang the engine.
import { RE2JS } from "re2js";

/** What ECMAScript regular expressions have and RE2 has not: refused when a schema uses them. */
const NOT_LINEAR = "lookahead (?=…) (?!…), lookbehind (?<=…) (?<!…) and backreferences (\\1, \\k<name>)";

/**
 * ajv's `code.regExp`: a schema's pattern (with ajv's flags, "u") to something that tests a string for a match anywhere in
 * it, as JSON Schema's `pattern` means. A pattern RE2 cannot run throws, naming it and what to write instead.
 */
function linearRegExp(pattern: string, flags: string): { test(text: string): boolean; toString(): string } {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`pattern ${JSON.stringify(pattern)} cannot be matched in linear time (${reason}); output schemas' patterns may not use ${NOT_LINEAR}: rewrite it without them`);
  }
  // ajv keeps one compiled pattern per distinct string it is shown.
  return { test: (text) => compiled.test(text), toString: () => `/${pattern}/${flags}` };
}

/** ajv names the engine in code it generates for standalone use, which the engine never asks of it. */
export const linearRegExpEngine = Object.assign(linearRegExp, { code: "linearRegExp" });
