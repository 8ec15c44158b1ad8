// The run store's public face: run directories, metadata, the run lock and io logs, re-exported from their modules.
export { LAYOUT_VERSION, controlDir, ensureLayoutVersion, findRunDir, runPaths, type RunPaths } from "./run-dir.js";
export { STAGING_PREFIX, stageNewRunDir, stageRunDir, type StagedRun } from "./run-dir.js";
export { RunMetadataSchema, holderFacts, readMetadata, writeMetadata, type RunMetadata, type WriteMetadataOptions } from "./run-metadata.js";
export { LOCK_STALE_MS, acquireRunLock, forceBreakRunLock, readLockOwner, type LockOptions, type LockOwner, type ReleaseLock } from "./run-lock.js";
export {
  appendEngineLog,
  createEngineLogger,
  writeHookRecord,
  writeInvocation,
  writeToolExecution,
  type EngineLogger,
  type IoRecord,
} from "./io-log.js";
