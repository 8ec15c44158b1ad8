// The bubblewrap command line that boxes one process: read-only root, writable roots, protected and hidden paths, its own namespaces.
import path from "node:path";

/** Where a path is, as the host sees it now: what a bind needs to know. */
export type PathKind = "dir" | "file" | "missing";

/** Everything the box of one process is made of, as absolute, resolved paths (see docs/security.md). */
export interface SandboxBox {
  /** The workspace: writable under workspace-write. */
  workDir: string;
  writeWorkspace: boolean;
  /** Writable besides the workspace (`write:`). */
  write: readonly string[];
  /** The agent's folder: read-only even where a writable root holds it, its run's workspace excepted. */
  agentHome: string;
  /** Shown empty: secret folders and files, the engine's .env files, `deny_read:`. */
  hidden: readonly string[];
  /** Under `.delta/` but writable all the same (context_artifacts/ for a boxed generator). */
  writableInProtected?: readonly string[];
  /**
   * The engine's own code (its package, with the proxy's forwarder, delta-sessions and the delta a sub-agent runs, and
   * the packages it loads at run time): read-only wherever a writable root holds it, as a later delta runs it unboxed;
   * bound back read-only where the box's private /tmp would hide it, for an engine installed under /tmp.
   */
  engineCode?: readonly string[];
  network: BoxNetwork;
}

/**
 * `off`: a network namespace of its own, with only loopback. `on`: the host's. `proxy`: its own
 * namespace, where `forwarder` (argv, run before the command) listens on 127.0.0.1:`port` and carries
 * each connection to the engine's filtering proxy at the Unix socket `socket` — which is never bound
 * into the box: the engine connects to it and hands the connection in (sandbox/proxy-channel.ts).
 * Under `off` and `proxy`, `seccomp` is the program (dist/seccomp/<arch>.bpf) that refuses the box
 * socket(AF_UNIX) and io_uring, so no Unix socket of the host is reachable either.
 */
type BoxNetwork =
  | { kind: "off"; seccomp: string }
  | { kind: "on" }
  | { kind: "proxy"; socket: string; port: number; forwarder: readonly string[]; seccomp: string };

/** Names that stay read-only inside every writable root, whether or not they exist yet. */
const PROTECTED_NAMES = [".delta", ".git", ".env"] as const;

/**
 * `command` (argv) run by bwrap in `box`, from `cwd`; `kindOf` tells what is at a path now (the only thing this
 * function asks of the host). A protected path that does not exist gets an empty read-only file
 * (.env) or folder in its place, which bwrap leaves behind as an empty placeholder. `seccompFd`: the
 * descriptor bwrap reads the seccomp program from, for a box whose network is not `on`.
 */
export function bwrapArgv(box: SandboxBox, command: readonly string[], cwd: string, kindOf: (target: string) => PathKind, seccompFd?: number): string[] {
  const args: string[] = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  const writable = unique([...(box.writeWorkspace ? [box.workDir] : []), ...box.write]);

  // Parents before children, so a deeper bind is never covered by a shallower one.
  const roots: { target: string; writable: boolean }[] = [
    ...writable.map((target) => ({ target, writable: true })),
    { target: box.agentHome, writable: false },
    // A read-only workspace under /tmp is bound back too, or the process would not see it.
    ...(box.writeWorkspace ? [] : [{ target: box.workDir, writable: false }]),
  ];
  const engineCode = unique(box.engineCode ?? []);
  for (const code of engineCode) {
    const underWritable = writable.some((target) => isWithin(code, target));
    const hiddenByTmp = isWithin(code, "/tmp") && !roots.some((root) => isWithin(code, root.target));
    if (underWritable || hiddenByTmp) roots.push({ target: code, writable: false });
  }
  roots.push(...pins(roots, kindOf));
  roots.sort((a, b) => depth(a.target) - depth(b.target));
  for (const root of roots) {
    if (kindOf(root.target) === "missing") continue;
    // The agent's folder as the run's workspace stays writable (refused at start under workspace-write); the engine's code never is.
    if (!root.writable && !engineCode.includes(root.target) && roots.some((other) => other.writable && other.target === root.target)) continue;
    if (root.writable && engineCode.includes(root.target)) continue;
    args.push(root.writable ? "--bind" : "--ro-bind", root.target, root.target);
  }

  // Inside each writable root: .delta/, .git and .env stay read-only, and cannot be created.
  for (const root of writable) {
    if (kindOf(root) !== "dir") continue;
    for (const name of PROTECTED_NAMES) {
      const target = path.join(root, name);
      const kind = kindOf(target);
      if (kind === "missing") {
        if (name === ".env") args.push("--ro-bind", "/dev/null", target);
        else args.push("--tmpfs", target, "--remount-ro", target);
      } else if (name === ".env" && kind === "file") {
        args.push("--ro-bind", "/dev/null", target);
      } else {
        args.push("--ro-bind", target, target);
      }
    }
  }
  for (const target of box.writableInProtected ?? []) {
    if (kindOf(target) === "dir") args.push("--bind", target, target);
  }

  for (const target of unique(box.hidden)) {
    // The box's /tmp is its own: what lies under the host's is hidden already, unless a root binds it back.
    if (isWithin(target, "/tmp") && !roots.some((root) => isWithin(target, root.target))) continue;
    const kind = kindOf(target);
    if (kind === "dir") args.push("--tmpfs", target, "--remount-ro", target);
    else if (kind === "file") args.push("--ro-bind", "/dev/null", target);
  }

  const network = box.network;
  args.push("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (network.kind !== "on") {
    if (seccompFd === undefined) throw new Error("a box without the host's network needs the descriptor of its seccomp program");
    args.push("--unshare-net", "--seccomp", String(seccompFd));
  }
  args.push("--die-with-parent", "--cap-drop", "ALL", "--chdir", cwd, "--");
  const inner = network.kind === "proxy" ? [...network.forwarder, String(network.port), "--", ...command] : [...command];
  return ["bwrap", ...args, ...inner];
}

/**
 * The folders between a writable root and a read-only root deeper inside it (the agent's folder under a workspace
 * above it), each bound writable onto itself: a mount point cannot be renamed, so none of them can be moved away
 * (the read-only bind travels with it) to leave the read-only root's path free for the box to fill with files the
 * engine later reads and runs unboxed. Their contents stay writable.
 */
function pins(roots: readonly { target: string; writable: boolean }[], kindOf: (target: string) => PathKind): { target: string; writable: boolean }[] {
  const pinned = new Set<string>();
  for (const inner of roots) {
    if (inner.writable) continue;
    for (const outer of roots) {
      if (!outer.writable || outer.target === inner.target || !isWithin(inner.target, outer.target)) continue;
      for (let dir = path.dirname(inner.target); dir !== outer.target && isWithin(dir, outer.target); dir = path.dirname(dir)) {
        if (kindOf(dir) === "dir" && !roots.some((root) => root.target === dir)) pinned.add(dir);
      }
    }
  }
  return [...pinned].map((target) => ({ target, writable: true }));
}

function isWithin(target: string, dir: string): boolean {
  return target === dir || target.startsWith(`${dir}/`);
}

function depth(target: string): number {
  return target.split("/").filter(Boolean).length;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths.map((target) => path.resolve(target)))];
}
