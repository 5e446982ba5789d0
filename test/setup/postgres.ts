import type { TestProject } from "vitest/node";
import { systemClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log/logger.js";
import { openStore } from "../../src/store/open.js";
import { createMigratedTemplate, POSTGRES_REQUIRED, startScratchCluster } from "../helpers/postgres.js";

/** The database every migration is applied to once, which test bridges' databases copy. */
const MIGRATED_TEMPLATE = "lb_migrated_template";

/**
 * Global setup: one scratch PostgreSQL cluster for the whole vitest run, removed after it. The
 * test files get its URL (or the reason there is none) through `inject("postgres")`; see
 * test/helpers/postgres.ts. Without PostgreSQL its tests are skipped, and say why, unless
 * LB_REQUIRE_POSTGRES=1 (CI): then the run fails here.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startScratchCluster();
  if ("skip" in cluster) {
    if (POSTGRES_REQUIRED) throw new Error(`LB_REQUIRE_POSTGRES=1 but ${cluster.skip}`);
    console.warn(`PostgreSQL tests skipped: ${cluster.skip}`);
    project.provide("postgres", { skip: cluster.skip });
    return async () => {};
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
  project.provide("postgres", { url: cluster.url, migrated: MIGRATED_TEMPLATE });
  return () => cluster.stop();
}
