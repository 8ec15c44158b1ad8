// The bwrap command line of a box, built from the policy's paths alone: what is bound, in which order, and what stays protected.
import { describe, expect, it } from "vitest";
import { bwrapArgv, type PathKind, type SandboxBox } from "../../../src/process/sandbox/argv.js";

const AGENT = "/home/u/agent";
const WS = "/home/u/agent/W001";
const SECCOMP = "/engine/dist/seccomp/x64.bpf";
/** The descriptor the spawner gave bwrap for the seccomp program. */
const FD = 3;

function box(overrides: Partial<SandboxBox> = {}): SandboxBox {
  return { workDir: WS, writeWorkspace: true, write: [], agentHome: AGENT, hidden: [], network: { kind: "off", seccomp: SECCOMP }, ...overrides };
}

/** A host where the given paths exist (folders unless they end in a file name with a dot-extension or are listed as files). */
function host(dirs: string[], files: string[] = []): (target: string) => PathKind {
  return (target) => (dirs.includes(target) ? "dir" : files.includes(target) ? "file" : "missing");
}

/** The argv of a box whose seccomp program bwrap reads from descriptor FD. */
function argvOf(spec: SandboxBox, command: string[], cwd: string, kindOf: (target: string) => PathKind): string[] {
  return bwrapArgv(spec, command, cwd, kindOf, FD);
}

/** The argv as `flag a b` triples and lone flags, for readable assertions. */
function mounts(argv: string[]): string[] {
  const out: string[] = [];
  for (let index = 1; index < argv.length && argv[index] !== "--"; index++) {
    const flag = argv[index]!;
    const arity = ["--bind", "--ro-bind"].includes(flag) ? 2 : ["--tmpfs", "--remount-ro", "--dev", "--proc", "--chdir", "--cap-drop", "--seccomp"].includes(flag) ? 1 : 0;
    out.push([flag, ...argv.slice(index + 1, index + 1 + arity)].join(" "));
    index += arity;
  }
  return out;
}

describe("bwrapArgv", () => {
  it("binds the root read-only, gives a private /tmp, then the agent folder read-only and its run's workspace writable inside it", () => {
    const argv = argvOf(box(), ["ls"], WS, host([AGENT, WS, `${WS}/.delta`]));
    const list = mounts(argv);
    expect(list.slice(0, 4)).toEqual(["--ro-bind / /", "--dev /dev", "--proc /proc", "--tmpfs /tmp"]);
    expect(list.indexOf(`--ro-bind ${AGENT} ${AGENT}`)).toBeLessThan(list.indexOf(`--bind ${WS} ${WS}`));
    expect(argv.slice(argv.indexOf("--"))).toEqual(["--", "ls"]);
  });

  it("binds the engine's own package back read-only when it is installed under /tmp, and not where the read-only root shows it", () => {
    const engine = "/tmp/clone/delta-engine";
    const underTmp = mounts(argvOf(box({ engineCode: [engine, `${engine}/node_modules/ajv`] }), ["ls"], WS, host([AGENT, WS, engine, `${engine}/node_modules/ajv`])));
    expect(underTmp).toContain(`--ro-bind ${engine} ${engine}`);
    expect(underTmp.indexOf(`--ro-bind ${engine} ${engine}`)).toBeGreaterThan(underTmp.indexOf("--tmpfs /tmp"));
    // Its packages come back with it: no second bind.
    expect(underTmp.filter((entry) => entry.includes("node_modules/ajv"))).toEqual([]);
    expect(mounts(argvOf(box({ engineCode: ["/usr/lib/node_modules/delta-engine"] }), ["ls"], WS, host([AGENT, WS])))).not.toContain("--ro-bind /usr/lib/node_modules/delta-engine /usr/lib/node_modules/delta-engine");
  });

  it("keeps the engine's code read-only inside a writable root, its packages too, with the folders between pinned", () => {
    const ws = "/home/u/project";
    const engine = `${ws}/node_modules/delta-engine`;
    const ajv = `${ws}/node_modules/ajv`;
    const list = mounts(argvOf(box({ workDir: ws, engineCode: [engine, ajv] }), ["ls"], ws, host([ws, `${ws}/node_modules`, engine, ajv])));
    const order = [`--bind ${ws} ${ws}`, `--bind ${ws}/node_modules ${ws}/node_modules`, `--ro-bind ${engine} ${engine}`].map((entry) => list.indexOf(entry));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(list).toContain(`--ro-bind ${ajv} ${ajv}`);
    // A writable root that is the engine's code itself is read-only all the same (the run refuses such a workspace at start).
    const named = mounts(argvOf(box({ workDir: ws, write: [ajv], engineCode: [engine, ajv] }), ["ls"], ws, host([ws, `${ws}/node_modules`, engine, ajv])));
    expect(named).toContain(`--ro-bind ${ajv} ${ajv}`);
    expect(named).not.toContain(`--bind ${ajv} ${ajv}`);
  });

  it("pins each folder between a workspace and the agent's folder deeper inside it: bound onto itself, after the workspace and before the agent", () => {
    const ws = "/home/u/project";
    const agent = `${ws}/team/agents/agent`;
    const list = mounts(argvOf(box({ workDir: ws, agentHome: agent }), ["ls"], ws, host([ws, `${ws}/team`, `${ws}/team/agents`, agent])));
    const order = [`--bind ${ws} ${ws}`, `--bind ${ws}/team ${ws}/team`, `--bind ${ws}/team/agents ${ws}/team/agents`, `--ro-bind ${agent} ${agent}`].map((entry) => list.indexOf(entry));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // Directly under the workspace, the agent's own bind is the mount point that cannot move: nothing to pin.
    const direct = mounts(argvOf(box({ workDir: ws, agentHome: `${ws}/agent` }), ["ls"], ws, host([ws, `${ws}/agent`])));
    expect(direct.filter((entry) => entry.startsWith("--bind "))).toEqual([`--bind ${ws} ${ws}`]);
    // The run's workspace inside the agent's folder: the agent's folder is read-only above it, nothing to pin.
    expect(mounts(argvOf(box(), ["ls"], WS, host([AGENT, WS]))).filter((entry) => entry.startsWith("--bind "))).toEqual([`--bind ${WS} ${WS}`]);
  });

  it("keeps .delta, .git and .env read-only inside the workspace, and blocks them where they do not exist yet", () => {
    const list = mounts(argvOf(box(), ["ls"], WS, host([AGENT, WS, `${WS}/.delta`])));
    const afterWorkspace = list.slice(list.indexOf(`--bind ${WS} ${WS}`) + 1);
    expect(afterWorkspace).toContain(`--ro-bind ${WS}/.delta ${WS}/.delta`);
    expect(afterWorkspace).toContain(`--tmpfs ${WS}/.git`);
    expect(afterWorkspace).toContain(`--remount-ro ${WS}/.git`);
    expect(afterWorkspace).toContain(`--ro-bind /dev/null ${WS}/.env`);
  });

  it("shows an existing .env empty, and hides secret folders and files", () => {
    const list = mounts(argvOf(box({ hidden: ["/home/u/.ssh", "/home/u/.netrc", "/home/u/.aws"] }), ["ls"], WS, host([AGENT, WS, "/home/u/.ssh"], [`${WS}/.env`, "/home/u/.netrc"])));
    expect(list).toContain(`--ro-bind /dev/null ${WS}/.env`);
    expect(list).toContain("--tmpfs /home/u/.ssh");
    expect(list).toContain("--ro-bind /dev/null /home/u/.netrc");
    // Nothing to hide where nothing is.
    expect(list.join("\n")).not.toContain("/home/u/.aws");
  });

  it("binds write: paths writable, and the workspace read-only under read-only", () => {
    const list = mounts(argvOf(box({ writeWorkspace: false, write: ["/var/cache/pip"] }), ["ls"], WS, host([AGENT, WS, "/var/cache/pip"])));
    expect(list).toContain("--bind /var/cache/pip /var/cache/pip");
    expect(list).toContain(`--ro-bind ${WS} ${WS}`);
    expect(list).not.toContain(`--bind ${WS} ${WS}`);
  });

  it("unshares the network unless it is on, and runs the forwarder first under a host list", () => {
    const off = argvOf(box(), ["ls"], WS, host([AGENT, WS]));
    expect(off).toContain("--unshare-net");
    const on = argvOf(box({ network: { kind: "on" } }), ["ls"], WS, host([AGENT, WS]));
    expect(on).not.toContain("--unshare-net");
    const proxied = argvOf(box({ network: { kind: "proxy", socket: "/run/p.sock", port: 3128, forwarder: ["node", "fwd.cjs"], seccomp: SECCOMP } }), ["curl", "x"], WS, host([AGENT, WS]));
    expect(proxied).toContain("--unshare-net");
    // The proxy's socket is never bound in: the engine hands each connection to the forwarder.
    expect(proxied.join(" ")).not.toContain("/run/p.sock");
    expect(proxied.slice(proxied.indexOf("--"))).toEqual(["--", "node", "fwd.cjs", "3128", "--", "curl", "x"]);
  });

  it("always makes a user, pid and ipc namespace, drops every capability and dies with the engine", () => {
    const argv = argvOf(box(), ["ls"], "/somewhere", host([AGENT, WS]));
    for (const flag of ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent"]) expect(argv).toContain(flag);
    expect(mounts(argv)).toContain("--cap-drop ALL");
    expect(mounts(argv)).toContain("--chdir /somewhere");
  });

  it("loads the seccomp program from the descriptor it is given in every box without the host's network, and in none with it", () => {
    const off = argvOf(box(), ["ls"], WS, host([AGENT, WS]));
    expect(mounts(off)).toContain(`--seccomp ${FD}`);
    const proxied = argvOf(box({ network: { kind: "proxy", socket: "/run/p.sock", port: 3128, forwarder: ["node", "fwd.cjs"], seccomp: SECCOMP } }), ["ls"], WS, host([AGENT, WS]));
    expect(mounts(proxied)).toContain(`--seccomp ${FD}`);
    expect(argvOf(box({ network: { kind: "on" } }), ["ls"], WS, host([AGENT, WS]))).not.toContain("--seccomp");
    expect(() => bwrapArgv(box(), ["ls"], WS, host([AGENT, WS]))).toThrow("needs the descriptor of its seccomp program");
  });

  it("hides a path under /tmp only where a root binds it back: the box's /tmp is its own", () => {
    const sockets = "/tmp/delta-sockets-1000";
    expect(mounts(argvOf(box({ hidden: [sockets] }), ["ls"], WS, host([AGENT, WS, sockets])))).not.toContain(`--tmpfs ${sockets}`);
    const tmpRoot = box({ workDir: "/tmp", hidden: [sockets] });
    expect(mounts(argvOf(tmpRoot, ["ls"], "/tmp", host([AGENT, "/tmp", sockets])))).toContain(`--tmpfs ${sockets}`);
  });

  it("keeps the agent's folder read-only over a writable workspace above it", () => {
    const list = mounts(argvOf(box({ workDir: "/home/u" }), ["ls"], "/home/u", host([AGENT, "/home/u"])));
    expect(list.indexOf(`--ro-bind ${AGENT} ${AGENT}`)).toBeGreaterThan(list.indexOf("--bind /home/u /home/u"));
  });
});
