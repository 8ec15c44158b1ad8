// interaction/: where an open ask_human question waits for its answer (request.json) and where the answer may be left (response.txt).
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { InteractionRequest } from "../loop/ports.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../private-modes.js";
import { writeFileAtomic } from "../store/atomic-file.js";

export function writeInteractionRequest(interactionDir: string, request: InteractionRequest): void {
  mkdirSync(interactionDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  writeFileAtomic(join(interactionDir, "request.json"), `${JSON.stringify(request, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
}

export function clearInteraction(interactionDir: string): void {
  rmSync(join(interactionDir, "request.json"), { force: true });
  rmSync(join(interactionDir, "response.txt"), { force: true });
}
