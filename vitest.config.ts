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
      // Each test file runs in a process of its own (vitest's default isolation, set by the root's pool options: a
      // project's own `isolate` does not reach the pool). One process kept for many files was measured slower on 2
      // quiet cores (291 s against 228 s for the whole project) and ended with a worker torn down mid-file.
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, "test/hosts/**", "test/install/**"] } },
      // The global installs (npm pack, npm install -g): two more installs of every dependency, kept out of npm test's few minutes.
      { extends: true, test: { name: "install", include: ["test/install/**/*.test.ts"], hookTimeout: 300_000 } },
      // Booting and stopping the hosts' machines (sshd, Slurm, sshfs mounts) takes tens of seconds on a busy machine.
      { extends: true, test: { name: "hosts", include: ["test/hosts/**/*.test.ts"], hookTimeout: 120_000 } },
    ],
  },
});
