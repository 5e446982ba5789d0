import type { TestProject } from "vitest/node";
import { POSTGRES_REQUIRED, startScratchCluster } from "../helpers/postgres.js";

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
  project.provide("postgres", { url: cluster.url });
  return () => cluster.stop();
}
