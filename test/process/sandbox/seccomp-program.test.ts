// The seccomp program of a box without the host's network, run instruction by instruction: what it refuses, what it lets through, on each architecture the build writes it for.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SECCOMP_ARCHES, seccompFileName, seccompProgram } from "../../../scripts/seccomp-filter.mjs";
import { REPO } from "../../e2e/harness.js";

const KILL_PROCESS = 0x80000000;
const EPERM = 0x00050001;
const ALLOW = 0x7fff0000;
const AF_UNIX = 1n;
const AF_INET = 2n;
const SOCK_STREAM = 1n;
const SOCK_DGRAM = 2n;
const SOCK_SEQPACKET = 5n;
/** SOCK_NONBLOCK | SOCK_CLOEXEC, as OR-ed into a type. */
const TYPE_FLAGS = 0o4000n | 0o2000000n;
const AUDIT_ARCH_I386 = 0x40000003;

interface Call {
  arch: number;
  nr: number;
  args?: bigint[];
}

/** A classic-BPF machine for the instructions a seccomp program of ours uses: load a word of seccomp_data, AND a constant, jump on equal or greater, return. */
function run(program: Buffer, call: Call): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(call.nr, 0);
  data.writeUInt32LE(call.arch, 4);
  (call.args ?? []).forEach((arg, index) => data.writeBigUInt64LE(arg, 16 + index * 8));
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program[pc * 8 + 2]!;
    const jf = program[pc * 8 + 3]!;
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = data.readUInt32LE(k);
    else if (code === 0x54) accumulator = (accumulator & k) >>> 0;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`instruction ${code.toString(16)} at ${pc} is not one the program should use`);
  }
  throw new Error("the program ran off its end");
}

describe.each(Object.entries(SECCOMP_ARCHES))("the seccomp program for %s", (arch, spec) => {
  const program = seccompProgram(arch);

  it("refuses socket(AF_UNIX, …) with EPERM, whatever the upper half of the register holds", () => {
    expect(run(program, { arch: spec.audit, nr: spec.socket, args: [AF_UNIX, 1n, 0n] })).toBe(EPERM);
    expect(run(program, { arch: spec.audit, nr: spec.socket, args: [(0xdeadbeefn << 32n) | AF_UNIX, 1n, 0n] })).toBe(EPERM);
  });

  it("lets other sockets and every other call through: TCP, connect, read", () => {
    expect(run(program, { arch: spec.audit, nr: spec.socket, args: [AF_INET, 1n, 0n] })).toBe(ALLOW);
    const others = arch === "x64" ? [42, 0] : [203, 63];
    for (const nr of others) expect(run(program, { arch: spec.audit, nr, args: [AF_UNIX] })).toBe(ALLOW);
  });

  it("lets stream and seqpacket socketpairs through (a child's pipes), with or without their flags, and refuses a datagram pair, which can send to any datagram socket of the host", () => {
    for (const type of [SOCK_STREAM, SOCK_SEQPACKET, SOCK_STREAM | TYPE_FLAGS, SOCK_SEQPACKET | TYPE_FLAGS]) {
      expect(run(program, { arch: spec.audit, nr: spec.socketpair, args: [AF_UNIX, type, 0n, 0n] })).toBe(ALLOW);
    }
    expect(run(program, { arch: spec.audit, nr: spec.socketpair, args: [AF_UNIX, SOCK_DGRAM, 0n, 0n] })).toBe(EPERM);
    expect(run(program, { arch: spec.audit, nr: spec.socketpair, args: [AF_UNIX, SOCK_DGRAM | TYPE_FLAGS, 0n, 0n] })).toBe(EPERM);
    expect(run(program, { arch: spec.audit, nr: spec.socketpair, args: [AF_UNIX, (0xdeadbeefn << 32n) | SOCK_DGRAM, 0n, 0n] })).toBe(EPERM);
  });

  it("refuses io_uring, whose IORING_OP_SOCKET makes sockets without socket(2)", () => {
    for (const nr of spec.ioUring) expect(run(program, { arch: spec.audit, nr })).toBe(EPERM);
  });

  it("kills a call of another ABI, whose socketcall hides its arguments", () => {
    expect(run(program, { arch: AUDIT_ARCH_I386, nr: 102, args: [1n] })).toBe(KILL_PROCESS);
    if (spec.x32) expect(run(program, { arch: spec.audit, nr: 0x40000000 | spec.socket, args: [AF_UNIX] })).toBe(KILL_PROCESS);
  });

  it("is what the build wrote under dist/seccomp/", () => {
    expect(readFileSync(join(REPO, "dist", "seccomp", seccompFileName(arch)))).toEqual(program);
  });
});
