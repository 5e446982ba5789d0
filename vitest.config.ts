import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One scratch PostgreSQL cluster per run for the second store's tests (skipped, with the
    // reason, where PostgreSQL is not installed; LB_REQUIRE_POSTGRES=1 makes that an error).
    globalSetup: ["test/setup/postgres.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn servers and child processes; two cores here, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
  },
});
