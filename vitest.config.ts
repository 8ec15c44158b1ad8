// Test runner settings: three projects. "unit" (npm test) and "install" (npm run test:install) need only Node and npm; "hosts" (npm run test:hosts) needs system packages and fails, never skips, without them.
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Ceilings, not margins: a test waits for the event it needs, and on a machine whose cores are all busy an e2e test
    // that starts the binary a few times can take several times what it takes alone.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Nothing is left in /tmp, and no test touches the user's run index.
    globalSetup: ["test/support/global-setup.ts"],
    // One test file more than processors: an e2e test waits on the processes it started, on a server's timeout, on a
    // collector's flush bound, and a third worker on two cores keeps both busy meanwhile (15 e2e files on a loaded
    // machine: 94 s with two workers, 78 s with three).
    maxWorkers: availableParallelism() + 1,
    projects: [
      // A unit worker runs its test files one after another in one process, each file's own modules loaded anew but the
      // dependencies (zod, yaml, the MCP SDK, execa) loaded once: a process per file cost about 0.4 s of CPU each
      // (66 files of test/{agent,context,journal,loop,store,tools}: 176 s alone, 48 s together, on a loaded machine).
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, "test/hosts/**", "test/install/**"], isolate: false } },
      // The global installs (npm pack, npm install -g): two more installs of every dependency, kept out of npm test's few minutes.
      { extends: true, test: { name: "install", include: ["test/install/**/*.test.ts"], hookTimeout: 300_000 } },
      // Booting and stopping the hosts' machines (sshd, Slurm, sshfs mounts) takes tens of seconds on a busy machine.
      { extends: true, test: { name: "hosts", include: ["test/hosts/**/*.test.ts"], hookTimeout: 120_000 } },
    ],
  },
});
