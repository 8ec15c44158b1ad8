// The engine's version: recorded in every ENGINE_START and printed by `delta --version` and `delta-sessions --version`.
export const ENGINE_VERSION = "0.1.0";
