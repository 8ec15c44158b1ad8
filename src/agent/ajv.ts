// The parts of ajv the engine uses, and the linear-time engine its patterns run on, in one module: the build bundles it on its own (dist/delta-ajv.cjs), loaded only for runs with an output schema.
export { Ajv } from "ajv";
export { Ajv2020 } from "ajv/dist/2020.js";
export { metaValidator } from "./meta-validator.js";
export { linearRegExpEngine } from "./linear-regexp.js";
