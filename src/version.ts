// The engine's version: what `delta --version` and `delta-sessions --version` print and ENGINE_START records (package.json's, checked by a test).
export const ENGINE_VERSION = "0.1.0";
