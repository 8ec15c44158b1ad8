// The launcher's MALLOC_ARENA_MAX is taken back out of the environment before any child starts; a value the user chose stays.
import { expect, it } from "vitest";
import { takeLauncherMallocArenas } from "../../src/cli/malloc-arenas.js";

it("removes the variable and its mark when the launcher set them", () => {
  const env: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: "2", DELTA_LAUNCHER_MALLOC_ARENAS: "2", PATH: "/bin" };
  takeLauncherMallocArenas(env);
  expect(env).toEqual({ PATH: "/bin" });
});

it("leaves a value that is not the launcher's, and one set with no mark", () => {
  const changed: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: "8", DELTA_LAUNCHER_MALLOC_ARENAS: "2" };
  takeLauncherMallocArenas(changed);
  expect(changed).toEqual({ MALLOC_ARENA_MAX: "8" });
  const users: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: "2" };
  takeLauncherMallocArenas(users);
  expect(users).toEqual({ MALLOC_ARENA_MAX: "2" });
});
