// Preloaded into a `delta` process (NODE_OPTIONS=--require): counts the journal lines it parses, whatever the code path, and appends the count to $DELTA_TEST_PARSES_OUT at exit.
const { appendFileSync } = require("node:fs");
const parse = JSON.parse;
let lines = 0;
JSON.parse = function countingParse(text, reviver) {
  if (typeof text === "string" && text.startsWith('{"seq":')) lines += 1;
  return parse.call(this, text, reviver);
};
process.on("exit", () => {
  if (process.env.DELTA_TEST_PARSES_OUT) appendFileSync(process.env.DELTA_TEST_PARSES_OUT, `${lines}\n`);
});
