// A context file read every iteration: the same file found untouched at its name skips the link checks; anything a tool plants in its place (a link out, a folder swapped for a link, a FIFO, a new file) is checked and refused as on a first read.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { chmodSync, linkSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { FileRefusedError } from "../src/errors.js";
import { folderFileRereader, type FolderFile } from "../src/safe-open.js";
import { removeDir, tempDir } from "./e2e/harness.js";

// Each resolution of a path's links is counted: the checks resolve the file and its folder, a reread resolves nothing.
const resolutions = vi.hoisted(() => ({ count: 0 }));
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const native = (target: fs.PathLike): string => {
    resolutions.count += 1;
    return real.realpathSync.native(target);
  };
  return { ...real, realpathSync: Object.assign((target: fs.PathLike) => real.realpathSync(target), { native }) };
});

const root = tempDir("delta-rereader-");
const ws = join(root, "ws");
const outside = join(root, "home", ".ssh");
afterAll(() => removeDir(root));

let read: (file: FolderFile) => Buffer | null;
beforeEach(() => {
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(join(ws, "docs"), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "notes.md"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
  writeFileSync(join(ws, "docs", "notes.md"), "the notes\n");
  read = folderFileRereader();
});

function file(name: string): FolderFile {
  return { path: join(ws, name), folder: ws, maxBytes: 1 << 20, what: "a context file" };
}

function text(name: string): string | undefined {
  return read(file(name))?.toString();
}

function refusal(name: string): string {
  try {
    read(file(name));
  } catch (err) {
    expect(err).toBeInstanceOf(FileRefusedError);
    return (err as FileRefusedError).message;
  }
  throw new Error(`expected ${name} to be refused`);
}

/** The resolutions one read makes. */
function resolutionsOf(name: string): number {
  const before = resolutions.count;
  read(file(name));
  return resolutions.count - before;
}

describe("folderFileRereader", () => {
  it("checks a file's links on the first read and not again while it is the same file, untouched", () => {
    expect(resolutionsOf("docs/notes.md")).toBe(2);
    expect(resolutionsOf("docs/notes.md")).toBe(0);
    expect(resolutionsOf("docs/notes.md")).toBe(0);
    expect(text("docs/notes.md")).toBe("the notes\n");
  });

  it("reads a changed file's new text, and checks a file touched in any way again (a write, a chmod, a hard link, a new file)", () => {
    expect(text("docs/notes.md")).toBe("the notes\n");
    writeFileSync(join(ws, "docs", "notes.md"), "new notes\n");
    expect(text("docs/notes.md")).toBe("new notes\n");
    for (const touch of [
      () => chmodSync(join(ws, "docs", "notes.md"), 0o600),
      () => linkSync(join(ws, "docs", "notes.md"), join(ws, "docs", `hard-${resolutions.count}.md`)),
      () => {
        rmSync(join(ws, "docs", "notes.md"));
        writeFileSync(join(ws, "docs", "notes.md"), "new notes\n");
      },
    ]) {
      expect(resolutionsOf("docs/notes.md")).toBe(0);
      touch();
      expect(resolutionsOf("docs/notes.md")).toBe(2);
    }
  });

  it("refuses a link out planted in place of a file it read before", () => {
    expect(text("docs/notes.md")).toBe("the notes\n");
    rmSync(join(ws, "docs", "notes.md"));
    symlinkSync(join(outside, "notes.md"), join(ws, "docs", "notes.md"));
    expect(refusal("docs/notes.md")).toContain(`leads through a symbolic link to ${join(outside, "notes.md")}, outside ${ws}`);
  });

  it("refuses the file's folder swapped for a link out, to a file of the same name, after a read", () => {
    expect(text("docs/notes.md")).toBe("the notes\n");
    renameSync(join(ws, "docs"), join(ws, "docs-moved"));
    symlinkSync(outside, join(ws, "docs"));
    expect(refusal("docs/notes.md")).toContain(`leads through a symbolic link to ${join(outside, "notes.md")}, outside ${ws}`);
  });

  it("refuses a FIFO planted in place of a file it read before, without waiting for a writer", () => {
    expect(text("docs/notes.md")).toBe("the notes\n");
    rmSync(join(ws, "docs", "notes.md"));
    execFileSync("mkfifo", [join(ws, "docs", "notes.md")]);
    expect(refusal("docs/notes.md")).toContain("is a FIFO (named pipe), which would wait for a writer, not a regular file");
  });

  it("is null once the file is gone, and reads it again when it comes back", () => {
    expect(text("docs/notes.md")).toBe("the notes\n");
    rmSync(join(ws, "docs", "notes.md"));
    expect(read(file("docs/notes.md"))).toBeNull();
    writeFileSync(join(ws, "docs", "notes.md"), "back\n");
    expect(text("docs/notes.md")).toBe("back\n");
  });

  it("checks a file reached through a link inside its folder at every read", () => {
    symlinkSync("docs/notes.md", join(ws, "NOTES.md"));
    expect(resolutionsOf("NOTES.md")).toBe(2);
    expect(resolutionsOf("NOTES.md")).toBe(2);
    expect(text("NOTES.md")).toBe("the notes\n");
  });

  it("refuses a file grown past its bound since the last read", () => {
    expect(text("docs/notes.md")).toBe("the notes\n");
    writeFileSync(join(ws, "docs", "notes.md"), Buffer.alloc((1 << 20) + 1, "a"));
    expect(refusal("docs/notes.md")).toContain("is larger than 1.0 MiB");
  });
});
