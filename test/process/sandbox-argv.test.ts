// The bwrap command line of a box, built from the policy's paths alone: what is bound, in which order, and what stays protected.
import { describe, expect, it } from "vitest";
import { bwrapArgv, type PathKind, type SandboxBox } from "../../src/process/sandbox-argv.js";

const AGENT = "/home/u/agent";
const WS = "/home/u/agent/W001";

function box(overrides: Partial<SandboxBox> = {}): SandboxBox {
  return { workDir: WS, writeWorkspace: true, write: [], agentHome: AGENT, hidden: [], network: { kind: "off" }, ...overrides };
}

/** A host where the given paths exist (folders unless they end in a file name with a dot-extension or are listed as files). */
function host(dirs: string[], files: string[] = []): (target: string) => PathKind {
  return (target) => (dirs.includes(target) ? "dir" : files.includes(target) ? "file" : "missing");
}

/** The argv as `flag a b` triples and lone flags, for readable assertions. */
function mounts(argv: string[]): string[] {
  const out: string[] = [];
  for (let index = 1; index < argv.length && argv[index] !== "--"; index++) {
    const flag = argv[index]!;
    const arity = ["--bind", "--ro-bind"].includes(flag) ? 2 : ["--tmpfs", "--remount-ro", "--dev", "--proc", "--chdir", "--cap-drop"].includes(flag) ? 1 : 0;
    out.push([flag, ...argv.slice(index + 1, index + 1 + arity)].join(" "));
    index += arity;
  }
  return out;
}

describe("bwrapArgv", () => {
  it("binds the root read-only, gives a private /tmp, then the agent folder read-only and its run's workspace writable inside it", () => {
    const argv = bwrapArgv(box(), ["ls"], WS, host([AGENT, WS, `${WS}/.delta`]));
    const list = mounts(argv);
    expect(list.slice(0, 4)).toEqual(["--ro-bind / /", "--dev /dev", "--proc /proc", "--tmpfs /tmp"]);
    expect(list.indexOf(`--ro-bind ${AGENT} ${AGENT}`)).toBeLessThan(list.indexOf(`--bind ${WS} ${WS}`));
    expect(argv.slice(argv.indexOf("--"))).toEqual(["--", "ls"]);
  });

  it("binds the engine's own package back read-only when it is installed under /tmp, and nowhere else", () => {
    const engine = "/tmp/clone/delta-engine";
    const underTmp = mounts(bwrapArgv(box({ engineHome: engine }), ["ls"], WS, host([AGENT, WS, engine])));
    expect(underTmp).toContain(`--ro-bind ${engine} ${engine}`);
    expect(underTmp.indexOf(`--ro-bind ${engine} ${engine}`)).toBeGreaterThan(underTmp.indexOf("--tmpfs /tmp"));
    // Installed elsewhere, the read-only root already shows it; inside a writable workspace under /tmp, that bind does.
    expect(mounts(bwrapArgv(box({ engineHome: "/usr/lib/node_modules/delta-engine" }), ["ls"], WS, host([AGENT, WS])))).not.toContain("--ro-bind /usr/lib/node_modules/delta-engine /usr/lib/node_modules/delta-engine");
    const tmpWs = "/tmp/ws";
    const inWorkspace = mounts(bwrapArgv(box({ workDir: tmpWs, engineHome: `${tmpWs}/delta` }), ["ls"], tmpWs, host([AGENT, tmpWs, `${tmpWs}/delta`])));
    expect(inWorkspace).not.toContain(`--ro-bind ${tmpWs}/delta ${tmpWs}/delta`);
  });

  it("keeps .delta, .git and .env read-only inside the workspace, and blocks them where they do not exist yet", () => {
    const list = mounts(bwrapArgv(box(), ["ls"], WS, host([AGENT, WS, `${WS}/.delta`])));
    const afterWorkspace = list.slice(list.indexOf(`--bind ${WS} ${WS}`) + 1);
    expect(afterWorkspace).toContain(`--ro-bind ${WS}/.delta ${WS}/.delta`);
    expect(afterWorkspace).toContain(`--tmpfs ${WS}/.git`);
    expect(afterWorkspace).toContain(`--remount-ro ${WS}/.git`);
    expect(afterWorkspace).toContain(`--ro-bind /dev/null ${WS}/.env`);
  });

  it("shows an existing .env empty, and hides secret folders and files", () => {
    const list = mounts(bwrapArgv(box({ hidden: ["/home/u/.ssh", "/home/u/.netrc", "/home/u/.aws"] }), ["ls"], WS, host([AGENT, WS, "/home/u/.ssh"], [`${WS}/.env`, "/home/u/.netrc"])));
    expect(list).toContain(`--ro-bind /dev/null ${WS}/.env`);
    expect(list).toContain("--tmpfs /home/u/.ssh");
    expect(list).toContain("--ro-bind /dev/null /home/u/.netrc");
    // Nothing to hide where nothing is.
    expect(list.join("\n")).not.toContain("/home/u/.aws");
  });

  it("binds write: paths writable, and the workspace read-only under read-only", () => {
    const list = mounts(bwrapArgv(box({ writeWorkspace: false, write: ["/var/cache/pip"] }), ["ls"], WS, host([AGENT, WS, "/var/cache/pip"])));
    expect(list).toContain("--bind /var/cache/pip /var/cache/pip");
    expect(list).toContain(`--ro-bind ${WS} ${WS}`);
    expect(list).not.toContain(`--bind ${WS} ${WS}`);
  });

  it("unshares the network unless it is on, and runs the forwarder first under a host list", () => {
    const off = bwrapArgv(box(), ["ls"], WS, host([AGENT, WS]));
    expect(off).toContain("--unshare-net");
    const on = bwrapArgv(box({ network: { kind: "on" } }), ["ls"], WS, host([AGENT, WS]));
    expect(on).not.toContain("--unshare-net");
    const proxied = bwrapArgv(box({ network: { kind: "proxy", socket: "/run/p.sock", port: 3128, forwarder: ["node", "fwd.cjs"] } }), ["curl", "x"], WS, host([AGENT, WS]));
    expect(proxied).toContain("--unshare-net");
    expect(mounts(proxied)).toContain("--bind /run/p.sock /tmp/.delta-proxy.sock");
    expect(proxied.slice(proxied.indexOf("--"))).toEqual(["--", "node", "fwd.cjs", "/tmp/.delta-proxy.sock", "3128", "--", "curl", "x"]);
  });

  it("always makes a user, pid and ipc namespace, drops every capability and dies with the engine", () => {
    const argv = bwrapArgv(box(), ["ls"], "/somewhere", host([AGENT, WS]));
    for (const flag of ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent"]) expect(argv).toContain(flag);
    expect(mounts(argv)).toContain("--cap-drop ALL");
    expect(mounts(argv)).toContain("--chdir /somewhere");
  });
});
