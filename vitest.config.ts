// Test runner settings: two projects. "unit" (npm test) needs only Node and npm; "hosts" (npm run test:hosts) needs system packages and fails, never skips, without them.
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    projects: [
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, "test/hosts/**"] } },
      { extends: true, test: { name: "hosts", include: ["test/hosts/**/*.test.ts"] } },
    ],
  },
});
