import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Is PostgreSQL installed here (as test/helpers/postgres.ts looks for it)? Without it the second
 * store's project is left out with a warning, unless LB_REQUIRE_POSTGRES=1 (CI): then its
 * global setup fails the run.
 */
function postgresInstalled(): boolean {
  if (process.env.LB_REQUIRE_POSTGRES === "1") return true;
  if (process.env.LB_POSTGRES_BIN) return existsSync(join(process.env.LB_POSTGRES_BIN, "initdb"));
  const root = "/usr/lib/postgresql";
  return existsSync(root) && readdirSync(root).some((v) => existsSync(join(root, v, "bin", "initdb")));
}

/**
 * The suites that run a second time with every bridge on PostgreSQL: everything that drives a
 * whole bridge (end to end, chaos, crash, the provisioning API, panel modules, adapters, CLI).
 * Left out: tests of SQLite's own file and lock behaviour, and tests no store touches.
 */
const BOTH_STORES = [
  // Several instances on one database: PostgreSQL only.
  "test/postgres/**/*.test.ts",
  "test/e2e/**/*.test.ts",
  "test/provisioning/**/*.test.ts",
  "test/integrations/**/*.test.ts",
  "test/adapters/**/*.test.ts",
  "test/cli/**/*.test.ts",
  "test/reconcile/**/*.test.ts",
  "test/adoption/**/*.test.ts",
  "test/retention/**/*.test.ts",
  "test/renewals/**/*.test.ts",
  "test/mail/install-mail.test.ts",
  "test/lifecycle-smoke.test.ts",
  // The console keeps its sessions in the store.
  "test/console/console-http.test.ts",
];
const SQLITE_ONLY = ["test/e2e/write-lock.test.ts", "test/e2e/database-file.test.ts", "test/e2e/startup.test.ts"];
/** In a folder of the above, but touching no store: run once. */
const NO_STORE = ["test/reconcile/turns.test.ts"];

const withPostgres = postgresInstalled();
if (!withPostgres) console.warn("PostgreSQL is not installed: the suites run on SQLite only (CI sets LB_REQUIRE_POSTGRES=1)");

export default defineConfig({
  test: {
    // Children run `node bin/license-bridge.mjs`, i.e. the compiled dist/: built first if src/ changed.
    // Then one scratch PostgreSQL cluster per project and run, for the second store's tests
    // (skipped, with the reason, where PostgreSQL is not installed; LB_REQUIRE_POSTGRES=1 makes that an error).
    globalSetup: ["test/global-setup.ts", "test/setup/postgres.ts"],
    // The default reporter, and where the time went (per project, the slowest files) after it.
    reporters: ["default", "./test/timings-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn servers and child processes; two cores here, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"], exclude: ["test/postgres/**"] } },
      ...(withPostgres
        ? [{ extends: true as const, test: { name: "postgres", include: BOTH_STORES, exclude: [...SQLITE_ONLY, ...NO_STORE], env: { LB_TEST_STORE: "postgres" } } }]
        : []),
    ],
  },
});
