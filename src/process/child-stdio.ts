// The descriptors a child starts with: its stdio, what the box needs, and no descriptor this process inherited, so no caller's file reaches a child.
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync } from "node:fs";
import type { StdioOptions } from "node:child_process";

type StdioEntry = Exclude<StdioOptions, string>[number];

/** O_CLOEXEC and the access mode as /proc/<pid>/fdinfo's `flags:` shows them (octal, on every Linux architecture Node runs on). */
const O_CLOEXEC = 0o2000000;
const O_ACCMODE = 0o3;

let inherited: readonly number[] | undefined;
let devNull: number | undefined;

/**
 * The descriptors above 2 that a child would inherit from this process: those without close-on-exec.
 * Node opens every descriptor of its own close-on-exec, so these are what the engine's caller left open
 * (`exec 200<dir`, a shell's own pipes). Read once from /proc/self/fdinfo; none where there is no /proc.
 * Each one that can be is moved out of every child's way first (`reopened`): what is left is what children
 * get /dev/null over.
 */
function inheritedDescriptors(): readonly number[] {
  if (inherited !== undefined) return inherited;
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc/self/fdinfo");
  } catch {
    return (inherited = []);
  }
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0 && !reopened(fd, parseInt(flags, 8) & O_ACCMODE)) found.push(fd);
    } catch {
      // Closed meanwhile (the directory's own descriptor): nothing to inherit.
    }
  }
  return (inherited = found.sort((a, b) => a - b));
}

/**
 * `fd` opened again, close-on-exec (as Node opens every file), from /proc/self/fd/N, and the original closed: this
 * process still holds the caller's file until it exits (a pipe's reader sees its end no sooner), and no child inherits
 * it, so no spawn carries a stdio entry for it — each spawn would otherwise walk an entry for every number up to the
 * highest such descriptor (15.8 M instructions an iteration instead of 12.2 M with one at 251). Only a regular file, a
 * folder or a pipe, whose opening does nothing else, without blocking (O_NONBLOCK: a pipe with no reader refuses); false,
 * and the original left as it is, for anything else (a socket, a device) or what cannot be opened again.
 */
function reopened(fd: number, access: number): boolean {
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() && !stats.isDirectory() && !stats.isFIFO()) return false;
    const mode = access === constants.O_WRONLY ? constants.O_WRONLY : access === constants.O_RDWR ? constants.O_RDWR : constants.O_RDONLY;
    // The copy is never closed: held until this process exits, as the original was.
    openSync(`/proc/self/fd/${fd}`, mode | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return false;
  }
  closeSync(fd);
  return true;
}

/**
 * `base` (stdin, stdout, stderr) followed by `extras` at the first free places from 3 on, and /dev/null at the
 * place of every inherited descriptor. Node has no closefrom and runs no code between fork and exec, but
 * libuv puts each stdio entry over its number in the child: so the caller's file at that number is never
 * the child's, boxed or not (bubblewrap passes descriptors through to the box). `places` says where each
 * extra landed (the number the child, or bwrap, knows it by).
 */
export function childStdio(base: readonly StdioEntry[], extras: readonly StdioEntry[] = [], from: readonly number[] = inheritedDescriptors()): { stdio: StdioEntry[]; places: number[] } {
  const taken = new Set(from);
  const stdio: StdioEntry[] = [...base];
  const places: number[] = [];
  for (const extra of extras) {
    let place = stdio.length;
    while (taken.has(place) || (place < stdio.length && stdio[place] !== "ignore")) place += 1;
    while (stdio.length < place) stdio.push("ignore");
    stdio[place] = extra;
    places.push(place);
  }
  for (const fd of from) {
    while (stdio.length <= fd) stdio.push("ignore");
    stdio[fd] = (devNull ??= openSync("/dev/null", "r+"));
  }
  return { stdio, places };
}
