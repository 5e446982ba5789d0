import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Children run `node bin/license-bridge.mjs`, i.e. the compiled dist/: built first if src/ changed.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn servers and child processes; two cores here, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
  },
});
