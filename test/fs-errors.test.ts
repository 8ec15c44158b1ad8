// Each file-system errno maps to one error type, exit code and fix, whichever module met it.
import { describe, expect, it } from "vitest";
import { EXIT } from "../src/errors.js";
import { classifyFsError, fsError } from "../src/fs-errors.js";

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: something happened`), { code });
}

describe("fsError", () => {
  it.each([
    ["EROFS", "WORKSPACE_ERROR", EXIT.REFUSED, /give a writable directory with -w/],
    ["EACCES", "WORKSPACE_ERROR", EXIT.REFUSED, /give a writable directory with -w/],
    ["EPERM", "WORKSPACE_ERROR", EXIT.REFUSED, /give a writable directory with -w/],
    ["ENOSPC", "DISK_FULL", EXIT.FAILED, /the disk is full: free some space, then `delta continue`/],
    ["EDQUOT", "DISK_FULL", EXIT.FAILED, /the disk is full/],
    ["EIO", "IO_ERROR", EXIT.FAILED, /I\/O error/],
    ["ESTALE", "IO_ERROR", EXIT.FAILED, /I\/O error/],
    ["EMFILE", "ENGINE_ERROR", EXIT.FAILED, /^Cannot write \/x: EMFILE: something happened$/],
  ])("%s becomes %s (exit %i) with its fix", (code, type, exitCode, fix) => {
    const err = fsError("Cannot write /x", errno(code));
    expect(err.type).toBe(type);
    expect(err.exitCode).toBe(exitCode);
    expect(err.message).toMatch(/^Cannot write \/x: /);
    expect(err.message).toMatch(fix);
    expect(err.cause).toMatchObject({ code });
  });

  it("takes the caller's fix for an unwritable place, and refuses other errnos while nothing has run", () => {
    expect(fsError("Cannot lock /r", errno("EROFS"), { hint: "the workspace must be writable" }).message).toMatch(/; the workspace must be writable$/);
    const refused = fsError("-w /f: cannot use /f as the workspace", errno("ENOTDIR"), { otherwise: "refused" });
    expect([refused.type, refused.exitCode]).toEqual(["WORKSPACE_ERROR", EXIT.REFUSED]);
    expect(fsError("Cannot create /d", errno("ENOSPC"), { otherwise: "refused" }).type).toBe("DISK_FULL");
  });

  it("classifies errors that carry no code as other", () => {
    expect(classifyFsError(new Error("plain"))).toBe("other");
    expect(classifyFsError(undefined)).toBe("other");
  });
});
