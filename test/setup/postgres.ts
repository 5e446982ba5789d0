import type { TestProject } from "vitest/node";
import { systemClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log/logger.js";
import { openStore } from "../../src/store/open.js";
import { createMigratedTemplate, POSTGRES_REQUIRED, startScratchCluster, type PostgresProvided } from "../helpers/postgres.js";

/** The database every migration is applied to once, which test bridges' databases copy. */
const MIGRATED_TEMPLATE = "lb_migrated_template";

/** The run's cluster, shared by the projects (each runs its global setups, in this one process), and how many use it. */
interface Shared {
  ready: Promise<{ provided: PostgresProvided; stop(): Promise<void> }>;
  users: number;
}

/**
 * Global setup: one scratch PostgreSQL cluster for the whole vitest run, both projects' tests on
 * it (each on databases of its own), removed after the last. The test files get its URL (or the
 * reason there is none) through `inject("postgres")`; see test/helpers/postgres.ts. Without
 * PostgreSQL its tests are skipped, and say why, unless LB_REQUIRE_POSTGRES=1 (CI): then the run
 * fails here.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const state = globalThis as { licenseBridgeCluster?: Shared };
  const shared = (state.licenseBridgeCluster ??= { ready: startCluster(), users: 0 });
  shared.users++;
  const { provided, stop } = await shared.ready;
  project.provide("postgres", provided);
  return async () => {
    if (--shared.users > 0) return;
    state.licenseBridgeCluster = undefined;
    await stop();
  };
}

async function startCluster(): Promise<{ provided: PostgresProvided; stop(): Promise<void> }> {
  const cluster = await startScratchCluster();
  if ("skip" in cluster) {
    if (POSTGRES_REQUIRED) throw new Error(`LB_REQUIRE_POSTGRES=1 but ${cluster.skip}`);
    console.warn(`PostgreSQL tests skipped: ${cluster.skip}`);
    return { provided: { skip: cluster.skip }, stop: async () => {} };
  }
  try {
    await createMigratedTemplate(cluster.url, MIGRATED_TEMPLATE, async (url) => {
      const store = await openStore({ DATABASE_URL: url, DATABASE_PATH: "", JOB_MAX_ATTEMPTS: 8 }, { clock: systemClock, logger: silentLogger() });
      await store.close();
    });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return { provided: { url: cluster.url, migrated: MIGRATED_TEMPLATE }, stop: () => cluster.stop() };
}
