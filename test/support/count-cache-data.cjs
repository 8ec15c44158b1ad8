// Preloaded into a `delta` process (NODE_OPTIONS=--require): appends a line to $DELTA_TEST_CACHE_DATA_OUT each time V8 is asked for a code cache's data (vm.Script#createCachedData).
const { appendFileSync } = require("node:fs");
const { Script } = require("node:vm");
const createCachedData = Script.prototype.createCachedData;
Script.prototype.createCachedData = function countedCreateCachedData(...args) {
  if (process.env.DELTA_TEST_CACHE_DATA_OUT) appendFileSync(process.env.DELTA_TEST_CACHE_DATA_OUT, "made\n");
  return createCachedData.apply(this, args);
};
