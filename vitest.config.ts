// Test runner settings: four projects. "unit" and "e2e" (npm test) and "install" (npm run test:install) need only Node and npm; "hosts" (npm run test:hosts) needs system packages and fails, never skips, without them.
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/** The test files that start the built `delta`. */
const E2E = ["test/e2e/**/*.test.ts", "test/examples/**/*.test.ts", "test/golden/**/*.test.ts"];

/** npm test's projects: worker threads kept from file to file (the root's pool options), each file's modules loaded anew. */
const KEPT_THREADS = { pool: "threads", poolOptions: { threads: { isolate: true } } } as const;

export default defineConfig({
  test: {
    // Ceilings, not margins: a test waits for the event it needs, and on a machine whose cores are all busy an e2e test
    // that starts the binary a few times can take several times what it takes alone.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The threads pool keeps its workers from one test file to the next (each file's modules are still loaded anew: the
    // projects' own isolate); the forks pool starts a process per file. Only the root's pool options reach a pool.
    // It keeps as many as it may run: with fewer kept (one, by default) it stops an idle worker as another file is handed
    // to it, and that file fails with "Terminating worker thread" (about one run in two). The forks pool keeps its
    // default: kept processes there only slow it (8 e2e files: 42 s against 32 s), and one a failed run left behind
    // went on spinning.
    poolOptions: { threads: { isolate: false, minThreads: availableParallelism() + 1 } },
    // Nothing is left in /tmp, and no test touches the user's run index.
    globalSetup: ["test/support/global-setup.ts"],
    // One test file more than processors: an e2e test waits on the processes it started, on a server's timeout, on a
    // collector's flush bound, and a third worker on two cores keeps both busy meanwhile (15 e2e files on a loaded
    // machine: 94 s with two workers, 78 s with three).
    maxWorkers: availableParallelism() + 1,
    projects: [
      // The files that start the built binary, the examples' and the golden runs. In kept threads too (on 2 quiet cores,
      // npm test's vitest: 194 s and 362 s of CPU with a process per e2e file, 181 s and 325 s in kept threads, loading
      // and collecting the files 54 s against 18 s). Every process they start is forked from the one that holds the
      // threads, 300-700 MB, ~45 µs a MB: bought back many times by the processes not started.
      { extends: true, test: { name: "e2e", include: E2E, ...KEPT_THREADS } },
      // Everything else, in kept threads: a process per file
      // cost each about 0.2 s of CPU before its first test (these 158 files, on 2 quiet cores: 41 s and 76 s of CPU in
      // a process each, 18 s and 31 s in kept threads).
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...E2E, "test/hosts/**", "test/install/**"], ...KEPT_THREADS } },
      // The global installs (npm pack, npm install -g): two more installs of every dependency, kept out of npm test's few minutes.
      { extends: true, test: { name: "install", include: ["test/install/**/*.test.ts"], hookTimeout: 300_000 } },
      // Booting and stopping the hosts' machines (sshd, Slurm, sshfs mounts) takes tens of seconds on a busy machine.
      { extends: true, test: { name: "hosts", include: ["test/hosts/**/*.test.ts"], hookTimeout: 120_000 } },
    ],
  },
});
