// Sweep: one renewal sweep over 1,000,000 licences of which 1% are due: time to enqueue the
// due ones and the sweeping process's peak RSS.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/store/sqlite/database.js";
import { migrate } from "../src/store/sqlite/migrations.js";
import { startChild } from "./child.js";
import { report, type Figure } from "./report.js";

const LICENSES = Number(process.env.BENCH_LICENSES ?? 1_000_000);
const DAY = 86_400_000;

/** Generates the licences in bulk with one recursive CTE: 1 in 100 ends tomorrow and is paid. */
function generate(path: string): number {
  const db = openDatabase(path);
  migrate(db);
  const now = Date.now();
  db.pragma("synchronous = OFF");
  db.exec(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${LICENSES})
    INSERT INTO services (service_id, product_id, kind, type, ip, billing_cycle, months, status, expires_at, paid_until, created_at, updated_at)
    SELECT 's' || i, '12', 'licence', 'cpanel',
           '10.' || ((i >> 16) & 255) || '.' || ((i >> 8) & 255) || '.' || (i & 255), 'monthly', 1,
           CASE WHEN i % 50 = 0 THEN 'suspended' ELSE 'active' END,
           CASE WHEN i % 100 = 1 THEN ${now + DAY} ELSE ${now + 20 * DAY} + (i % 10) * ${DAY} END,
           ${now + 40 * DAY}, ${now}, ${now}
    FROM n;`);
  const due = (db.prepare("SELECT COUNT(*) AS n FROM services WHERE status = 'active' AND expires_at <= ?").get(now + 3 * DAY) as { n: number }).n;
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return due;
}

export async function runSweep(): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "lb-bench-sweep-"));
  try {
    const path = join(dir, "sweep.db");
    const t = performance.now();
    const due = generate(path);
    console.error(`generated ${LICENSES} licences (${due} due) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const run = await startChild<{ ms: number; rssMb: number; queued: number }>("sweep-child.ts", [path]);
    await run.stop();
    if (run.info.queued !== due) throw new Error(`sweep queued ${run.info.queued}, expected ${due}`);
    const scale = 1_000_000 / LICENSES;
    const figures: Figure[] = [
      { name: "sweep_licences", value: LICENSES },
      { name: "sweep_due", value: due },
      { name: "sweep_ms_per_1m", value: run.info.ms * scale, unit: "ms", target: "<= 1000", met: run.info.ms * scale <= 1000 },
      { name: "sweep_rss_mb", value: run.info.rssMb, unit: "MB", target: "<= 200", met: run.info.rssMb <= 200 },
    ];
    report(`sweep (${LICENSES} licences, 1% due)`, figures);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSweep();
