// The one safe open for a workspace's or an agent's files: what a tool can plant there (a link out, a link to a secret, a FIFO, /dev/zero, a huge file) is refused at once, naming the file and the fix.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileRefusedError } from "../src/errors.js";
import { readFolderFile, readFolderFileIfThere, type FolderFile } from "../src/safe-open.js";
import { removeDir, tempDir } from "./e2e/harness.js";

let root: string;
let ws: string;
let outside: string;
beforeAll(() => {
  root = tempDir("delta-folder-files-");
  ws = join(root, "ws");
  outside = join(root, "home", ".ssh");
  mkdirSync(join(ws, "docs"), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
  writeFileSync(join(ws, "docs", "guide.md"), "the guide\n");
  writeFileSync(join(ws, ".env"), "DELTA_API_KEY=sk-workspace-secret\n");
});
afterAll(() => removeDir(root));

const BOUND = 1 << 20;

function file(name: string, more: Partial<FolderFile> = {}): FolderFile {
  return { path: join(ws, name), folder: ws, maxBytes: BOUND, what: "a context file", ...more };
}

/** Plants `name` in the workspace as a link to `target`, as a tool would. */
function link(name: string, target: string): FolderFile {
  symlinkSync(target, join(ws, name));
  return file(name);
}

function thrown(read: () => unknown): unknown {
  try {
    read();
  } catch (err) {
    return err;
  }
  throw new Error("expected the read to throw");
}

function refusal(request: FolderFile): FileRefusedError {
  const error = thrown(() => readFolderFile(request));
  expect(error).toBeInstanceOf(FileRefusedError);
  return error as FileRefusedError;
}

describe("readFolderFile", () => {
  it("reads a regular file, and follows a link that stays inside the folder", () => {
    expect(readFolderFile(file("docs/guide.md")).toString()).toBe("the guide\n");
    expect(readFolderFile(link("DELTA.md", "docs/guide.md")).toString()).toBe("the guide\n");
  });

  it("refuses a link out of the folder it is named in (a private key, /proc/self/environ), naming the file, the target and the fix", () => {
    const key = refusal(link("key.md", join(outside, "id_rsa")));
    expect(key.message).toBe(
      `${join(ws, "key.md")} leads through a symbolic link to ${join(outside, "id_rsa")}, outside ${ws} where it is named (a tool could have planted the link); ` +
        "it is refused: put the file itself there, or name its real path",
    );
    expect(key.type).toBe("FILE_REFUSED");
    expect(refusal(link("environ.md", "/proc/self/environ")).message).toMatch(/leads through a symbolic link to \/proc\/\d+\/environ, outside/);
    // Through a linked folder too.
    symlinkSync(outside, join(ws, "notes"));
    expect(refusal(file("notes/id_rsa")).message).toContain(`to ${join(outside, "id_rsa")}, outside ${ws}`);
  });

  it("refuses a link to a .env or into a path boxes are shown empty, even inside the folder; the .env named as itself is read", () => {
    expect(refusal(link("env.md", ".env")).message).toContain(`leads through a symbolic link to ${join(ws, ".env")}, which every box is shown empty`);
    mkdirSync(join(ws, "private"));
    writeFileSync(join(ws, "private", "token"), "denied\n");
    const hidden = { ...link("token.md", "private/token"), hidden: [join(ws, "private")] };
    expect(refusal(hidden).message).toContain("which every box is shown empty");
    expect(readFolderFile(file(".env")).toString()).toContain("sk-workspace-secret");
  });

  it("refuses a FIFO at once, without waiting for a writer", () => {
    execFileSync("mkfifo", [join(ws, "fifo.md")]);
    expect(refusal(file("fifo.md")).message).toBe(`${join(ws, "fifo.md")} is a FIFO (named pipe), which would wait for a writer, not a regular file; it is refused: put a regular file there`);
  });

  it("refuses /dev/zero, by a link out or named where it is, without reading it", () => {
    expect(refusal(link("zero.md", "/dev/zero")).message).toContain("leads through a symbolic link to /dev/zero, outside");
    expect(refusal({ path: "/dev/zero", folder: "/dev", maxBytes: BOUND, what: "a context file" }).message).toBe("/dev/zero is a device, not a regular file; it is refused: put a regular file there");
    // A file named on the command line follows its links, and what they name must still be a regular file.
    expect(refusal({ ...link("replies.jsonl", "/dev/zero"), folder: null }).problem).toBe("leads to /dev/zero, which is a device, not a regular file; it is refused: put a regular file there");
  });

  it("refuses a 300 MB file by its bound without holding it, and a file that passes the bound as it is read", () => {
    const huge = join(ws, "huge.md");
    const fd = openSync(huge, "w");
    closeSync(fd);
    execFileSync("truncate", ["-s", "300M", huge]);
    const before = process.memoryUsage().rss;
    expect(refusal(file("huge.md")).message).toBe(`${huge} is larger than 1.0 MiB (1048576 bytes), the bound of a context file; it is refused: make it smaller`);
    expect(process.memoryUsage().rss - before).toBeLessThan(16 << 20);
    // Exactly the bound is read; one byte more is refused.
    writeFileSync(join(ws, "edge.md"), Buffer.alloc(BOUND, "a"));
    expect(readFolderFile(file("edge.md"))).toHaveLength(BOUND);
    writeFileSync(join(ws, "edge.md"), Buffer.alloc(BOUND + 1, "a"));
    expect(refusal(file("edge.md")).message).toContain("is larger than 1.0 MiB");
  });

  it("leaves a missing file, or a dangling link, to the caller as the system's ENOENT", () => {
    expect((thrown(() => readFolderFile(file("absent.md"))) as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect((thrown(() => readFolderFile(link("dangling.md", join(root, "nowhere")))) as NodeJS.ErrnoException).code).toBe("ENOENT");
  });
});

describe("readFolderFileIfThere", () => {
  it("is null for a missing file, a missing folder, a file in place of a folder and a dangling link", () => {
    writeFileSync(join(ws, "plain.md"), "plain\n");
    expect(readFolderFileIfThere(file("gone.md"))).toBeNull();
    expect(readFolderFileIfThere(file("no-such-folder/guide.md"))).toBeNull();
    expect(readFolderFileIfThere(file("plain.md/guide.md"))).toBeNull();
    expect(readFolderFileIfThere(link("dangling-too.md", join(root, "nowhere")))).toBeNull();
  });

  it("reads what is there as readFolderFile does, and refuses what it refuses", () => {
    expect(readFolderFileIfThere(file("docs/guide.md"))?.toString()).toBe("the guide\n");
    expect(thrown(() => readFolderFileIfThere(link("key-too.md", join(outside, "id_rsa"))))).toBeInstanceOf(FileRefusedError);
    execFileSync("mkfifo", [join(ws, "fifo-too.md")]);
    expect(thrown(() => readFolderFileIfThere(file("fifo-too.md")))).toBeInstanceOf(FileRefusedError);
  });
});
