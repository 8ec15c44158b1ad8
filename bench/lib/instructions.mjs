// Instructions a process executes in user space, counted by valgrind's callgrind: a per-iteration figure that does not move with a busy machine.
//
// CPU time on a shared 2-core machine swings by a fifth between runs of the same build; the instructions a run
// executes do not (±0.05 M an iteration here). What they leave out: the kernel's work (fork, exec, files) and the
// children's. One thing in them is random: V8 picks its hash seed's prime at start with a search of random length
// (`detail::sprp`, up to ~10 M instructions a process), taken out here.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Whether valgrind and callgrind_annotate are on the PATH. */
export async function canCountInstructions() {
  return (await runs("valgrind")) && (await runs("callgrind_annotate"));
}

/** Whether `program --version` could be started (callgrind_annotate 3.19 says its version and exits 255). */
async function runs(program) {
  try {
    await run(program, ["--version"]);
    return true;
  } catch (err) {
    return err.code !== "ENOENT";
  }
}

/**
 * Instructions `argv` (a program and its arguments) executes under callgrind, less V8's hash-seed search; `env` its
 * environment. Rejects when the program exits with another code than 0.
 */
export async function countInstructions(argv, env) {
  const dir = mkdtempSync(join(process.env.TMPDIR ?? "/tmp", "delta-callgrind-"));
  const out = join(dir, "callgrind.out");
  try {
    await run("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, "--smc-check=all-non-file", ...argv], { env, maxBuffer: 1 << 26 });
    const { stdout } = await run("callgrind_annotate", ["--threshold=100", out], { maxBuffer: 1 << 28 });
    return annotatedInstructions(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** From callgrind_annotate's text: the program's total instructions less those of `detail::sprp`. */
export function annotatedInstructions(text) {
  const total = /([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/.exec(text);
  if (total === null) throw new Error("callgrind_annotate printed no PROGRAM TOTALS line");
  let seedSearch = 0;
  for (const match of text.matchAll(/^\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*:detail::sprp\b/gm)) seedSearch += number(match[1]);
  return number(total[1]) - seedSearch;
}

function number(digits) {
  return Number(digits.replaceAll(",", ""));
}
