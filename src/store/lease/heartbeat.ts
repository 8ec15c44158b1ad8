// The holder's side of liveness: its own owner record, rewritten with a bumped heartbeat each beat, the running tool's and MCP servers' groups noted, marked released at the end.
import { open, rm } from "node:fs/promises";
import { renameSync } from "node:fs";
import { PRIVATE_FILE_MODE } from "../../private-modes.js";
import { overwriteOwnRecord, paddedRecord, recordPath, recordTempPath, rewriteOwnRecord, type OwnerRecord, type ServerGroup, type ToolGroup } from "./owner-record.js";

interface OwnRecordKeeper {
  /**
   * Bumps the heartbeat and rewrites the record, off the event loop (write and fsync in the thread pool), then renames
   * it into place at once if `mayWrite()` still holds. A beat still in flight makes this one a no-op.
   */
  beat(): void;
  /** Notes the tool just spawned (written now, before anything else happens) or, with null, that it ended (written at the next beat). */
  noteToolGroup(group: ToolGroup | null): void;
  /** Notes the process groups of the MCP servers just started (written now). */
  noteServerGroups(groups: ServerGroup[]): void;
  /** Marks the record released, durably; no beat is written after it. */
  markReleased(): void;
  /** No more writes (the run was lost, or released). */
  stop(): void;
}

export function keepOwnRecord(lockDir: string, initial: OwnerRecord, mayWrite: () => boolean): OwnRecordKeeper {
  let record = initial;
  // The size the record was claimed with: every rewrite keeps it (paddedRecord).
  let size = paddedRecord(initial).length;
  /** The length of the record as it is on disk now: a text of that length can overwrite it in place. */
  let onDisk = size;
  /** Counts every change of `record`; a beat whose change was overtaken by a later one is dropped, not renamed over it. */
  let version = 0;
  let inFlight = false;
  let stopped = false;
  const path = recordPath(lockDir, initial.generation);

  const change = (update: Partial<OwnerRecord>): void => {
    record = { ...record, ...update, heartbeat: (record.heartbeat ?? 0) + 1 };
    version += 1;
  };
  /** The record's bytes as it is now, at the size it keeps. */
  const text = (): string => {
    const padded = paddedRecord(record, size);
    size = padded.length;
    return padded;
  };
  const writeNow = (bytes: string, durable: boolean): void => {
    try {
      rewriteOwnRecord(lockDir, record.generation, bytes, durable, mayWrite);
      onDisk = bytes.length;
    } catch {
      // A record that could not be rewritten looks like one that missed a beat: the next beat tries again.
    }
  };

  /** Overwrites the record in place if the run is still this process's; false when that could not be done. */
  const overwriteInPlace = (bytes: string): boolean => {
    try {
      if (mayWrite()) overwriteOwnRecord(lockDir, record.generation, bytes);
      return true;
    } catch {
      return false;
    }
  };

  return {
    beat() {
      if (stopped || inFlight) return;
      change({});
      const mine = version;
      const bytes = text();
      const temp = recordTempPath(lockDir, record.generation);
      inFlight = true;
      void writeFileDurably(temp, bytes)
        .then(() => {
          // Synchronous from here to the rename: no release or tool note can slip in between the checks and it.
          if (stopped || version !== mine || !mayWrite()) throw new Error("overtaken");
          renameSync(temp, path);
          onDisk = bytes.length;
        })
        .catch(() => rm(temp, { force: true }).catch(() => undefined))
        .finally(() => {
          inFlight = false;
        });
    },
    noteToolGroup(group) {
      if (stopped) return;
      change({ tool_group: group });
      if (group === null) return;
      // Once per tool, so in place when it can be: a rename over a file costs a flush on some file systems (ext4).
      const bytes = text();
      if (bytes.length !== onDisk || !overwriteInPlace(bytes)) writeNow(bytes, false);
    },
    noteServerGroups(groups) {
      if (stopped) return;
      change({ server_groups: groups });
      writeNow(text(), false);
    },
    markReleased() {
      if (stopped) return;
      stopped = true;
      change({ released_at_unix: Date.now(), tool_group: null, server_groups: [] });
      writeNow(text(), true);
    },
    stop() {
      stopped = true;
    },
  };
}

async function writeFileDurably(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx", PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
