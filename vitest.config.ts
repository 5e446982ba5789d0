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
 * Where each suite runs. Every suite runs in the `sqlite` project; the `postgres` project runs a
 * second time, with every bridge on a fresh PostgreSQL database, only what can differ by store.
 *
 * What the store does is proven on both stores inside one run by the store contract
 * (test/store/**, `describeEachStore`; test/migrations.test.ts alike): each statement a bridge
 * sends PostgreSQL has a contract case, checked by logging every statement of the suites that
 * ran on both stores before and finding each one in the contract's own run. So the suites that
 * drive HTTP, PHP or the CLI through that same store API run once, on SQLite: the panel modules
 * (test/integrations), the adapters, the provisioning API, the CLI, the console, adoption,
 * reconcile, mail, the admin API, and the fuzzing and chaos (each once, on the store whose
 * behaviour it probes: see below).
 */
const BOTH_STORES = [
  // Several instances on one database, a database dropped under the service, the SQLite import:
  // PostgreSQL only (the sqlite project leaves this folder out).
  "test/postgres/**/*.test.ts",
  // The job engine end to end, where each store's transactions, locks and leases decide:
  // SIGKILL mid-registration and a restart that buys each licence once;
  "test/e2e/crash.test.ts",
  // exactly once at intake (copies of a delivery at one moment, each store's unique index);
  "test/e2e/intake.test.ts",
  // one service's jobs in arrival order under latency, and a soak of lost answers and 5xx;
  "test/e2e/faults.test.ts",
  // every job kind's writes, from order to termination;
  "test/e2e/lifecycle.test.ts",
  // and by each provider's capabilities (Manage2, CLN: section 12's table, lost answers);
  "test/e2e/providers.test.ts",
  // a job still running when the store closes, left to its lease and resumed after a restart.
  "test/e2e/shutdown.test.ts",
  // Retention: each store's prune (and what it must keep) on a running bridge.
  "test/retention/**/*.test.ts",
  // Renewals: each store's due query (its plan uses the index) and the sweep over it.
  "test/renewals/**/*.test.ts",
  // The same renew given to two instances at once (two on PostgreSQL, one on SQLite).
  "test/provisioning/renew.test.ts",
  // One order end to end: the smoke test of a bridge on each store.
  "test/lifecycle-smoke.test.ts",
];

/*
 * Once, on SQLite (not listed above), and why:
 * - test/e2e/chaos.test.ts: SIGKILLs mid-write under upstream faults probe a bridge's own
 *   durability, which on SQLite is ours (WAL, synchronous commits, group commit) and on
 *   PostgreSQL the server's; killed instances on PostgreSQL are test/postgres/two-instances.
 * - test/e2e/fuzz.test.ts, admin-fuzz.test.ts, test/provisioning/fuzz.test.ts: they probe the
 *   HTTP boundary's validation, which no store takes part in.
 * - test/e2e/settle.test.ts: the settle window is the job's (call-once.ts); its store writes
 *   (the intent, with when its answer was lost, and the deferral) are contract cases, and a
 *   SIGKILL mid-charge on PostgreSQL is crash.test.ts's.
 * - SQLite's own file and lock behaviour (write-lock, database-file, startup, test/store's
 *   SQLite-only files): SQLite only by nature.
 */

const withPostgres = postgresInstalled();
if (!withPostgres) console.warn("PostgreSQL is not installed: the suites run on SQLite only (CI sets LB_REQUIRE_POSTGRES=1)");

export default defineConfig({
  test: {
    // Children run `node bin/license-bridge.mjs`, i.e. the compiled dist/: built first if src/ changed.
    // Then one scratch PostgreSQL cluster per run, both projects on it, for the second store's tests
    // (skipped, with the reason, where PostgreSQL is not installed; LB_REQUIRE_POSTGRES=1 makes that an error).
    globalSetup: ["test/global-setup.ts", "test/setup/postgres.ts"],
    // The default reporter, and where the time went (per project, the slowest files) after it.
    reporters: ["default", "./test/timings-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn servers and child processes; two cores here, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
    // A worker runs file after file of its project with the modules it has loaded, instead of a
    // fresh process importing src/ again per file: it halved the CPU time of the suite (54 files
    // of test/e2e, observability, store and adapters: 159 s to 75 s of CPU). Safe while no file
    // leaves state behind for the next: no test changes process.env or mocks a module of ours,
    // helpers count their ids upwards across files, and every server, bridge and child a test
    // starts is closed after it. (A project's files share workers; the two projects never do.)
    isolate: false,
    projects: [
      { extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"], exclude: ["test/postgres/**"] } },
      ...(withPostgres ? [{ extends: true as const, test: { name: "postgres", include: BOTH_STORES, env: { LB_TEST_STORE: "postgres" } } }] : []),
    ],
  },
});
