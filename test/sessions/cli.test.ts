// Drives the built delta-sessions binary in temp dirs: state persistence, serialization, refusals, bounds.
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ExecResultSchema, HistoryEntrySchema, SessionMetadataSchema } from "../../src/sessions/schema.js";
import { ensureBuilt, makeTempDir, removeTempDir, sessions, sessionsJson } from "./cli-harness.js";

const StartResultSchema = z.strictObject({
  session_id: z.string(),
  command: z.string(),
  work_dir: z.string(),
  status: z.literal("active"),
});

const tempDirs: string[] = [];

beforeAll(ensureBuilt, 60_000);
afterAll(async () => {
  await Promise.all(tempDirs.map(removeTempDir));
});

/** A fresh temp dir and helpers bound to it, so tests can run concurrently. */
async function workspace() {
  const dir = await makeTempDir();
  tempDirs.push(dir);
  const sessionFile = (id: string, name: string): string => path.join(dir, ".sessions", id, name);
  return {
    dir,
    start: async (args: string[] = []): Promise<string> =>
      StartResultSchema.parse(await sessionsJson(["start", ...args], { cwd: dir })).session_id,
    exec: async (id: string, command: string, extra: string[] = []): Promise<z.infer<typeof ExecResultSchema>> =>
      ExecResultSchema.parse(await sessionsJson(["exec", id, ...extra], { cwd: dir, input: command })),
    metadataOf: async (id: string): Promise<z.infer<typeof SessionMetadataSchema>> =>
      SessionMetadataSchema.parse(JSON.parse(await readFile(sessionFile(id, "metadata.json"), "utf8"))),
    historyOf: async (id: string): Promise<z.infer<typeof HistoryEntrySchema>[]> => {
      const text = await readFile(sessionFile(id, "history.log"), "utf8");
      return text.trimEnd().split("\n").map((line) => HistoryEntrySchema.parse(JSON.parse(line)));
    },
  };
}

describe.concurrent("delta-sessions", () => {
  it("start creates an active bash session in the current directory with the design's metadata", async () => {
    const { dir, metadataOf } = await workspace();
    const started = StartResultSchema.parse(await sessionsJson(["start"], { cwd: dir }));
    expect(started.session_id).toMatch(/^sess_[a-f0-9]{12}$/);
    expect(started).toMatchObject({ command: "bash", work_dir: dir, status: "active" });
    const metadata = await metadataOf(started.session_id);
    expect(metadata).toMatchObject({ status: "active", execution_count: 0, last_executed_at: null, work_dir: dir });
    expect(await readFile(path.join(dir, ".sessions", started.session_id, "work_dir.txt"), "utf8")).toBe(`${dir}\n`);
  });

  it("keeps the working directory, exported variables and unsets between execs", async () => {
    const { dir, start, exec, metadataOf } = await workspace();
    const id = await start();
    await mkdir(path.join(dir, "sub"));
    await exec(id, "cd sub && export GREETING='hello world' && export DOOMED=1");
    await exec(id, "unset DOOMED");
    const result = await exec(id, 'pwd; echo "$GREETING"; echo "${DOOMED-gone}"');
    expect(result.stdout).toBe(`${path.join(dir, "sub")}\nhello world\ngone\n`);
    expect((await metadataOf(id)).execution_count).toBe(3);
  });

  it("reports a failing command's own exit code, exits 0 itself, and still saves the state", async () => {
    const { dir, start, exec, historyOf } = await workspace();
    const id = await start();
    const run = await sessions(["exec", id, "cd /tmp && export AFTER_EXIT=kept && exit 3"], { cwd: dir });
    expect(run.exitCode).toBe(0);
    expect(ExecResultSchema.parse(JSON.parse(run.stdout))).toMatchObject({ exit_code: 3, timed_out: false });
    expect((await exec(id, 'echo "$PWD $AFTER_EXIT"')).stdout).toBe("/tmp kept\n");
    expect((await historyOf(id)).map((entry) => entry.exit_code)).toEqual([3, 0]);
  });

  it("runs a multi-line heredoc script read from stdin, quotes and all", async () => {
    const { start, exec } = await workspace();
    const id = await start();
    const script = "for i in 1 2 3; do\n  echo \"Number: $i\"\ndone\necho 'single $quoted' \"double\"\n";
    const result = await exec(id, script);
    expect(result).toMatchObject({ stdout: "Number: 1\nNumber: 2\nNumber: 3\nsingle $quoted double\n", exit_code: 0 });
  });

  it("serializes two concurrent execs on one session so their output never interleaves", async () => {
    const { dir, start, exec, metadataOf, historyOf } = await workspace();
    const id = await start();
    const appendLines = (tag: string): string =>
      `for i in 1 2 3 4; do echo ${tag}$i >> ordered.txt; sleep 0.05; done; export LAST=${tag}; echo ${tag} >> finished.txt`;
    const [first, second] = await Promise.all([exec(id, appendLines("A")), exec(id, appendLines("B"))]);
    expect([first.exit_code, second.exit_code]).toEqual([0, 0]);
    const lines = (await readFile(path.join(dir, "ordered.txt"), "utf8")).trimEnd().split("\n");
    const order = (await readFile(path.join(dir, "finished.txt"), "utf8")).trimEnd().split("\n");
    expect(order.sort()).toEqual(["A", "B"]);
    const [earlier, later] = lines[0] === "A1" ? ["A", "B"] : ["B", "A"];
    expect(lines).toEqual([1, 2, 3, 4].map((n) => `${earlier}${n}`).concat([1, 2, 3, 4].map((n) => `${later}${n}`)));
    expect((await exec(id, 'echo "$LAST"')).stdout).toBe(`${later}\n`);
    expect((await metadataOf(id)).execution_count).toBe(3);
    expect((await historyOf(id)).map((entry) => entry.command)).toEqual([appendLines(earlier), appendLines(later), 'echo "$LAST"']);
  });

  it("takes over a stale lock left by a killed exec instead of waiting forever", async () => {
    const { dir, start, exec } = await workspace();
    const id = await start();
    const lock = path.join(dir, ".sessions", id, "exec.lock");
    await mkdir(lock);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lock, longAgo, longAgo);
    expect((await exec(id, "echo through")).stdout).toBe("through\n");
  });

  it("end marks the session terminated, keeps only metadata.json, and refuses later execs", async () => {
    const { dir, start, exec, metadataOf } = await workspace();
    const id = await start();
    await exec(id, "export X=1");
    expect(await sessionsJson(["end", id], { cwd: dir })).toEqual({ status: "terminated", session_id: id });
    expect(await readdir(path.join(dir, ".sessions", id))).toEqual(["metadata.json"]);
    expect((await metadataOf(id)).status).toBe("terminated");
    const refused = await sessions(["exec", id, "echo nope"], { cwd: dir });
    expect(refused).toMatchObject({ exitCode: 1, stdout: "" });
    expect(refused.stderr).toContain(`session ${id} has ended`);
  });

  it("refuses an unknown session id with exit 1 and a message naming it", async () => {
    const { dir } = await workspace();
    const refused = await sessions(["exec", "sess_0123456789ab", "echo nope"], { cwd: dir });
    expect(refused).toMatchObject({ exitCode: 1, stdout: "" });
    expect(refused.stderr).toMatch(/unknown session sess_0123456789ab/);
  });

  it("refuses a hostile id before touching any path", async () => {
    const { dir } = await workspace();
    await mkdir(path.join(dir, "etc"));
    await writeFile(path.join(dir, "etc", "metadata.json"), "{}");
    for (const hostile of ["../../etc", "../etc", "sess_0123456789ab/../../etc"]) {
      const refused = await sessions(["exec", hostile, "echo nope"], { cwd: path.join(dir, "etc") });
      expect(refused).toMatchObject({ exitCode: 1, stdout: "" });
      expect(refused.stderr).toContain("invalid session id");
    }
    const ended = await sessions(["end", "../../etc"], { cwd: dir });
    expect(ended).toMatchObject({ exitCode: 1, stdout: "" });
    expect(ended.stderr).toContain("invalid session id");
    expect(existsSync(path.join(dir, "etc", "metadata.json"))).toBe(true);
  });

  it("never saves the provider's keys or endpoint from the starting shell into env.sh, where a workspace's tools can read it", async () => {
    const { dir } = await workspace();
    const env = { DELTA_API_KEY: "sk-session-key-0123456", OPENAI_API_KEY: "sk-openai-key-0123456", DELTA_BASE_URL: "http://user:pw-0123456@127.0.0.1:9/v1", KEPT_VARIABLE: "kept" };
    const id = StartResultSchema.parse(await sessionsJson(["start"], { cwd: dir, env })).session_id;
    const saved = await readFile(path.join(dir, ".sessions", id, "env.sh"), "utf8");
    expect(saved).toContain("KEPT_VARIABLE");
    for (const name of Object.keys(env).filter((name) => name !== "KEPT_VARIABLE")) expect(saved).not.toContain(name);
    expect(saved).not.toContain("0123456");
  });

  it("lists every session oldest first, in the directory DELTA_SESSIONS_DIR names", async () => {
    const { dir } = await workspace();
    const env = { DELTA_SESSIONS_DIR: path.join(dir, "elsewhere") };
    const first = StartResultSchema.parse(await sessionsJson(["start"], { cwd: dir, env })).session_id;
    const second = StartResultSchema.parse(await sessionsJson(["start", "sh"], { cwd: dir, env })).session_id;
    await sessionsJson(["end", first], { cwd: dir, env });
    const listed = z.array(SessionMetadataSchema).parse(await sessionsJson(["list"], { cwd: dir, env }));
    expect(listed.map((s) => [s.session_id, s.command, s.status])).toEqual([
      [first, "bash", "terminated"],
      [second, "sh", "active"],
    ]);
    expect(await sessionsJson(["list"], { cwd: dir })).toEqual([]);
  });

  it("kills the whole process group of a command that outlives --timeout-ms", async () => {
    const { dir, start, exec, historyOf } = await workspace();
    const id = await start();
    const result = await exec(id, "sleep 100 & echo $! > sleep.pid; echo started; wait", ["--timeout-ms", "300"]);
    expect(result).toMatchObject({ timed_out: true, exit_code: null, stdout: "started\n" });
    const sleepPid = Number(await readFile(path.join(dir, "sleep.pid"), "utf8"));
    expect(await processGone(sleepPid)).toBe(true);
    expect((await historyOf(id))[0]).toMatchObject({ timed_out: true, exit_code: null });
  });

  it("keeps the head and tail of a large output with a marker counting the bytes left out", async () => {
    const { start, exec } = await workspace();
    const id = await start();
    const result = await exec(id, "head -c 200000 /dev/zero | tr '\\0' a; printf END; printf %s oops >&2");
    const marker = /\n\[\.\.\. (\d+) bytes truncated \.\.\.\]\n/;
    const dropped = Number(result.stdout.match(marker)?.[1]);
    expect(dropped).toBe(200_003 - 64 * 1024);
    expect(result.stdout.startsWith("aaaa")).toBe(true);
    expect(result.stdout.endsWith("aaaEND")).toBe(true);
    expect(result.stdout.replace(marker, "")).toHaveLength(64 * 1024);
    expect(result.stderr).toBe("oops");
  });

  it("cuts a large output of 2-, 3- and 4-byte characters only between characters, counting every byte left out", async () => {
    const { start, exec } = await workspace();
    const id = await start();
    for (const char of ["é", "€", "😀"]) {
      // One ASCII byte first, so the head's half of the limit ends inside a character.
      const result = await exec(id, `printf a; yes '${char}' | head -n 40000 | tr -d '\\n'`);
      const total = 1 + 40_000 * Buffer.byteLength(char);
      const [head, marker, tail] = result.stdout.split("\n");
      expect(result.stdout, char).not.toContain("\ufffd");
      expect(head).toMatch(new RegExp(`^a(${char})+$`, "u"));
      expect(tail).toMatch(new RegExp(`^(${char})+$`, "u"));
      expect(Buffer.byteLength(head!) + Number(/^\[\.\.\. (\d+) bytes truncated \.\.\.\]$/.exec(marker!)?.[1]) + Buffer.byteLength(tail!)).toBe(total);
    }
  });

  it("feeds each command to a python3 session's stdin in its directory, without keeping interpreter state", async () => {
    const { dir, start, exec } = await workspace();
    const id = await start(["python3"]);
    const first = await exec(id, "import os\nvalue = 41\nprint(os.getcwd(), value + 1)\n");
    expect(first).toMatchObject({ stdout: `${dir} 42\n`, exit_code: 0 });
    const second = await exec(id, "print(value)");
    expect(second.exit_code).toBe(1);
    expect(second.stderr).toContain("NameError");
  });

  it("started as a command with NODE_EXTRA_CA_CERTS, Node starts without it and the session's shell still gets it as set", async () => {
    const { dir, exec } = await workspace();
    const bundle = path.join(dir, "extra-ca.pem");
    const probe = path.join(dir, "startup-probe.cjs");
    const probeOut = path.join(dir, "probe.json");
    await writeFile(probe, `require("node:fs").writeFileSync(${JSON.stringify(probeOut)}, JSON.stringify(process.env.NODE_EXTRA_CA_CERTS ?? null));\n`);
    const env = { NODE_EXTRA_CA_CERTS: bundle, NODE_OPTIONS: `--require ${probe}` };
    const started = await sessions(["start"], { cwd: dir, env, asCommand: true });
    expect(started.exitCode).toBe(0);
    expect(JSON.parse(await readFile(probeOut, "utf8"))).toBeNull();
    const id = StartResultSchema.parse(JSON.parse(started.stdout)).session_id;
    const seen = await exec(id, 'echo "[$NODE_EXTRA_CA_CERTS][$DELTA_DEFERRED_CA_CERTS]"');
    expect(seen.stdout).toBe(`[${bundle}][]\n`);
  });

  it("refuses to start a session whose program does not exist, leaving nothing behind", async () => {
    const { dir } = await workspace();
    const refused = await sessions(["start", "no-such-interpreter-xyz"], { cwd: dir });
    expect(refused).toMatchObject({ exitCode: 1, stdout: "" });
    expect(refused.stderr).toContain("no-such-interpreter-xyz");
    expect(await readdir(path.join(dir, ".sessions"))).toEqual([]);
  });
});

/** A killed process lingers as a zombie until its new parent reaps it; count that as gone. */
async function processGone(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
    if (stat === null || / Z /.test(stat.slice(stat.lastIndexOf(")")))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
