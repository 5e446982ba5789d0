import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn servers and child processes; two cores here, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
  },
});
