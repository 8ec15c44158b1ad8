// The descriptors a child starts with: what the box needs at the first free places, and /dev/null over every descriptor the engine inherited.
import { readlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { childStdio } from "../../src/process/child-stdio.js";

describe("childStdio", () => {
  it("puts /dev/null at each inherited descriptor's number and the extras at the first free numbers from 3", () => {
    const { stdio, places } = childStdio(["ignore", "pipe", "pipe"], [42, "ipc"], [3, 5, 200]);
    expect(places).toEqual([4, 6]);
    expect(stdio.slice(0, 3)).toEqual(["ignore", "pipe", "pipe"]);
    expect(stdio[4]).toBe(42);
    expect(stdio[6]).toBe("ipc");
    expect(stdio).toHaveLength(201);
    const devNull = stdio[3] as number;
    expect(readlinkSync(`/proc/self/fd/${devNull}`)).toBe("/dev/null");
    expect([stdio[5], stdio[200]]).toEqual([devNull, devNull]);
    expect(stdio.filter((entry, index) => index > 6 && index < 200).every((entry) => entry === "ignore")).toBe(true);
  });
});
