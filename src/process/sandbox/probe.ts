// Can this machine box a process? Finds bwrap on PATH and starts it once with the namespaces every box uses.
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { runProcess } from "../run-process.js";

/** Why no box can be made here, or null when one can. */
type SandboxUnavailable = { cause: "platform" | "no-bwrap" | "namespaces" | "nested"; detail: string } | null;

const PROBE_TIMEOUT_MS = 10_000;

/** `env` is the engine's: its PATH finds bwrap, and DELTA_SANDBOX says the engine itself runs in a tool's box. */
export async function probeSandbox(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): Promise<SandboxUnavailable> {
  if (platform !== "linux") return { cause: "platform", detail: `this machine runs ${platform}, and the sandbox has a Linux backend (bubblewrap) only` };
  const bwrap = findOnPath("bwrap", env.PATH ?? "");
  if (bwrap === null) return { cause: "no-bwrap", detail: "bubblewrap (bwrap) is not on PATH" };
  const probe = await runProcess({
    argv: [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "--cap-drop", "ALL", "true"],
    cwd: "/",
    env: { PATH: env.PATH ?? "" },
    timeoutMs: PROBE_TIMEOUT_MS,
    capture: { keep: "head-and-tail", maxBytes: 4096 },
  });
  if (probe.exitCode === 0) return null;
  const said = probe.stderr.trim() || (probe.spawnError?.message ?? `exit ${probe.exitCode ?? probe.signal}`);
  if (env.DELTA_SANDBOX === "1") return { cause: "nested", detail: `this engine runs inside a tool's sandbox, where bwrap cannot make another (${said})` };
  return { cause: "namespaces", detail: `bwrap cannot create the namespaces a box needs; user namespaces are probably not allowed here (${bwrap}: ${said})` };
}

function findOnPath(program: string, searchPath: string): string | null {
  for (const folder of searchPath.split(path.delimiter)) {
    if (folder === "") continue;
    const candidate = path.join(folder, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; the next folder.
    }
  }
  return null;
}
