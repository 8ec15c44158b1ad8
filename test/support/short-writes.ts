// A node:fs whose writeSync a test can cut short and then refuse with ENOSPC: how an appender meets a disk that fills part-way through a write.
import { vi } from "vitest";

/** Armed by a test: each of the next `shortWrites` writes stops after half its bytes, and the write of the rest fails. */
export const disk = { shortWrites: 0 };

/** For `vi.mock("node:fs", () => fsWithShortWrites())`: the real module but for writeSync. */
export async function fsWithShortWrites(): Promise<typeof import("node:fs")> {
  const fs = await vi.importActual<typeof import("node:fs")>("node:fs");
  let refusing = false;
  const writeSync = (fd: number, data: string | NodeJS.ArrayBufferView, ...rest: unknown[]): number => {
    if (refusing) {
      refusing = false;
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
    }
    if (disk.shortWrites > 0) {
      disk.shortWrites -= 1;
      refusing = true;
      const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      const offset = typeof rest[0] === "number" ? rest[0] : 0;
      const length = typeof rest[1] === "number" ? rest[1] : bytes.length - offset;
      return fs.writeSync(fd, bytes, offset, Math.max(1, Math.floor(length / 2)));
    }
    return (fs.writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
  };
  return { ...fs, default: { ...fs, writeSync }, writeSync } as typeof import("node:fs");
}
