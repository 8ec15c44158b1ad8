// Writes dist/seccomp/<arch>.bpf: the classic-BPF seccomp program bubblewrap loads (--seccomp FD) into a box whose network is off or a host list, one per architecture.
//
// Node has no libseccomp binding, and the program is under twenty instructions, so it is assembled here. It
// refuses socket(AF_UNIX, …) with EPERM (a path-named Unix socket of the host — docker.sock, the session
// bus, ssh-agent — is reachable through a read-only mount, and seccomp cannot read connect()'s address:
// it is behind a pointer), and io_uring, whose IORING_OP_SOCKET makes sockets without socket(2).
// socketpair(2) stays allowed for stream and seqpacket pairs: connected for good, they reach nothing outside the
// box, and libuv makes child stdio with them. A datagram pair is refused: a datagram socket can be connected
// again, or sent from with an address, to any datagram socket of the host (the journal's, /run/systemd/notify).
// A system call of another ABI (i386 through int 0x80, x32) kills the process: socketcall(2) hides its
// arguments behind a pointer as connect does.
import { join } from "node:path";
import { writeInPlace } from "./write-in-place.mjs";

/** seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64, little-endian on both ABIs). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const ARG1_LOW = 24;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const AND_K = 0x54;

const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const AF_UNIX = 1;
/** socket(2)'s type without SOCK_NONBLOCK and SOCK_CLOEXEC, which are OR-ed into it. */
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** x32 system calls are numbered from here on x86_64. */
const X32_SYSCALL_BIT = 0x40000000;

/** Per architecture (Node's process.arch names): its AUDIT_ARCH and the numbers of the calls refused. */
export const SECCOMP_ARCHES = {
  x64: { audit: 0xc000003e, socket: 41, socketpair: 53, ioUring: [425, 426, 427], x32: true },
  arm64: { audit: 0xc00000b7, socket: 198, socketpair: 199, ioUring: [425, 426, 427], x32: false },
};

/** The file name of the program for a Node process.arch, under dist/seccomp/. */
export function seccompFileName(arch) {
  return `${arch}.bpf`;
}

/** The program for `arch` as bubblewrap reads it: struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}, little-endian. */
export function seccompProgram(arch) {
  const spec = SECCOMP_ARCHES[arch];
  if (spec === undefined) throw new Error(`no seccomp program for architecture ${arch}`);
  const program = [
    [LD_W_ABS, ARCH],
    [JEQ_K, spec.audit, "abi", "kill"],
    ["abi", LD_W_ABS, NR],
    ...(spec.x32 ? [[JGE_K, X32_SYSCALL_BIT, "kill", "calls"]] : []),
    ["calls", JEQ_K, spec.socket, "domain", null],
    [JEQ_K, spec.socketpair, "pair", null],
    ...spec.ioUring.map((nr) => [JEQ_K, nr, "deny", null]),
    [RET_K, RET_ALLOW],
    // socket's first argument is an int: the low 32 bits are what the kernel reads.
    ["domain", LD_W_ABS, ARG0_LOW],
    [JEQ_K, AF_UNIX, "deny", "allow"],
    // socketpair's type (an int): stream and seqpacket pairs only.
    ["pair", LD_W_ABS, ARG1_LOW],
    [AND_K, SOCK_TYPE_MASK],
    [JEQ_K, SOCK_STREAM, "allow", null],
    [JEQ_K, SOCK_SEQPACKET, "allow", "deny"],
    ["deny", RET_K, RET_ERRNO | EPERM],
    ["allow", RET_K, RET_ALLOW],
    ["kill", RET_K, RET_KILL_PROCESS],
  ];
  return assemble(program);
}

/**
 * Instructions as [label?, code, k, jumpIfTrue?, jumpIfFalse?]: a jump names the label it goes to, or null
 * for the next instruction (classic BPF jumps only forward, by a count of instructions skipped).
 */
function assemble(lines) {
  const instructions = lines.map((line) => (typeof line[0] === "string" ? { label: line[0], rest: line.slice(1) } : { label: null, rest: line }));
  const at = new Map(instructions.flatMap((instruction, index) => (instruction.label === null ? [] : [[instruction.label, index]])));
  const buffer = Buffer.alloc(instructions.length * 8);
  instructions.forEach(({ rest: [code, k, whenTrue = null, whenFalse = null] }, index) => {
    const skip = (label) => {
      if (label === null) return 0;
      const target = at.get(label);
      if (target === undefined || target <= index || target - index - 1 > 255) throw new Error(`seccomp program: bad jump to ${label} at ${index}`);
      return target - index - 1;
    };
    buffer.writeUInt16LE(code, index * 8);
    buffer.writeUInt8(skip(whenTrue), index * 8 + 2);
    buffer.writeUInt8(skip(whenFalse), index * 8 + 3);
    buffer.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return buffer;
}

/** Writes every architecture's program under dist/seccomp/, each whole or not at all; returns the folder, as the build lists what it wrote. */
export function writeSeccompPrograms(root = process.cwd()) {
  const dir = join(root, "dist", "seccomp");
  for (const arch of Object.keys(SECCOMP_ARCHES)) writeInPlace(join(dir, seccompFileName(arch)), seccompProgram(arch));
  return [dir];
}
