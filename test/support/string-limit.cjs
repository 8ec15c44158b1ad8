// Preloaded into a `delta` process (NODE_OPTIONS=--require): V8's limit on one string (about 512 MB), lowered to $DELTA_TEST_STRING_LIMIT characters.
//
// A string built whole from a journal (the file read as one string, every event's text joined, one JSON document) fails
// here as it would at V8's limit, with the same RangeError, so a journal of a few MB proves what a 2 GB one would.
const limit = Number(process.env.DELTA_TEST_STRING_LIMIT);
if (Number.isSafeInteger(limit) && limit > 0) {
  const refuse = (length) => {
    if (length > limit) throw new RangeError(`Invalid string length (${length} characters, over the lowered limit of ${limit})`);
  };
  const toString = Buffer.prototype.toString;
  Buffer.prototype.toString = function limitedToString(...args) {
    const text = toString.apply(this, args);
    refuse(text.length);
    return text;
  };
  const join = Array.prototype.join;
  Array.prototype.join = function limitedJoin(...args) {
    const text = join.apply(this, args);
    refuse(text.length);
    return text;
  };
  const stringify = JSON.stringify;
  JSON.stringify = function limitedStringify(...args) {
    const text = stringify.apply(this, args);
    if (typeof text === "string") refuse(text.length);
    return text;
  };
  const fs = require("node:fs");
  const readFileSync = fs.readFileSync;
  fs.readFileSync = function limitedReadFileSync(...args) {
    const content = readFileSync.apply(this, args);
    if (typeof content === "string") refuse(content.length);
    return content;
  };
  // A string built by + or a template literal cannot be caught as it is made: it is caught where it is written.
  const write = process.stdout.write;
  process.stdout.write = function limitedWrite(chunk, ...rest) {
    if (typeof chunk === "string") refuse(chunk.length);
    return write.call(this, chunk, ...rest);
  };
  const writeSync = fs.writeSync;
  fs.writeSync = function limitedWriteSync(fd, chunk, ...rest) {
    if (typeof chunk === "string") refuse(chunk.length);
    return writeSync.call(this, fd, chunk, ...rest);
  };
}
