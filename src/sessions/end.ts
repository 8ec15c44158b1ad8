// Ends a session: marks it terminated and removes its state files, keeping metadata.json.
import type { SessionId } from "./ids.js";
import { withSessionLock } from "./lock.js";
import { readActiveMetadata, removeSessionState, sessionPaths, writeMetadata } from "./store.js";

interface EndResult {
  status: "terminated";
  session_id: string;
}

export async function endSession(
  root: string,
  id: SessionId,
  options: { waitMs: number; warn: (message: string) => void },
): Promise<EndResult> {
  await readActiveMetadata(root, id);
  const paths = sessionPaths(root, id);
  // Waits for a running exec, so its state is not deleted under it.
  await withSessionLock(paths.dir, { lockPath: paths.lock, waitMs: options.waitMs, warn: options.warn }, async () => {
    const metadata = await readActiveMetadata(root, id);
    await writeMetadata(root, { ...metadata, status: "terminated" });
    await removeSessionState(root, id);
  });
  return { status: "terminated", session_id: id };
}
