// bench:console's additions to bench:scale's book (scale-data.ts), written with its bulk writer.
import { serviceQueueKey } from "../src/vocabulary/job-kinds.js";
import { emailOf, serviceIdOf, type BulkDb } from "./scale-data.js";

const DAY = 86_400_000;
/** The licence with a long history: ten years of monthly renewals and their payments, mails and changes. */
export const LONG = serviceIdOf(0);
export const LONG_HISTORY = 2000;

/**
 * What the console shows that bench:scale's book lacks, at the proportions of a 100,000-licence
 * book: one licence with a long history and its mails; jobs that stopped (failed, blocked) in the
 * last 30 days; a hundred orders a day for the overview's chart (the book's renewals are already
 * in it: one per service 25 days ago); a year of operators' audit entries; and a tenth of the
 * book paid a month ahead with its term ending within the forecast's week, so the overview's
 * forecast has 10,000 renewals to price (bench:scale's book has none due).
 */
export async function seedConsole(bulk: BulkDb, now: number, services: number): Promise<void> {
  const actions = ["payment recorded", "renewed", "mailed renewal notice", "suspended", "unsuspended", "ip changed"];
  const span = 3650 * DAY;
  const history = Array.from({ length: LONG_HISTORY }, (_, k) => [LONG, now - span + Math.floor((k * span) / LONG_HISTORY), actions[k % actions.length]!, `entry ${k} of the long history`]);
  for (let h = 0; h < history.length; h += 1000) await bulk.insert("history", ["service_id", "at", "action", "detail"], history.slice(h, h + 1000));
  const mails = Array.from({ length: 20 }, (_, k) => [`bench-mail-${k}`, k === 0 ? "install" : "renewal_notice", 1, LONG, emailOf(0), `Your licence, mail ${k}`, `<bench-${k}@example.com>`, "sent", 1, now - (20 - k) * 30 * DAY, now - (20 - k) * 30 * DAY]);
  await bulk.insert("mails", ["mail_key", "kind", "job_id", "service_id", "to_address", "subject", "message_id", "state", "attempts", "created_at", "sent_at"], mails);

  const stopped = Array.from({ length: 400 }, (_, k) => {
    const id = serviceIdOf((k * 251) % services);
    const failed = k % 4 !== 0;
    const at = now - Math.floor((k / 400) * 30 * DAY);
    return ["renew", serviceQueueKey(id), id, `bench-stopped:${k}`, JSON.stringify({ service_id: id }), failed ? "failed" : "blocked", failed ? 5 : 1, 5, at, at, at, 1, failed ? "HTTP 503 from the reseller" : "The reseller refused for lack of balance", failed ? "upstream_unavailable" : "insufficient_balance"];
  });
  await bulk.insert("jobs", ["kind", "queue_key", "service_id", "unique_key", "payload", "state", "attempts", "max_attempts", "run_at", "created_at", "updated_at", "priority", "last_error", "error_code"], stopped);

  const orders = Array.from({ length: 3000 }, (_, k) => [`bench-order-${k}`, "billing", `msg_bench_${k}`, "service.created", serviceIdOf((k * 31) % services), "{}", now - Math.floor((k / 3000) * 30 * DAY), "accepted", null]);
  await bulk.insert("events", ["id", "source", "webhook_id", "type", "service_id", "payload", "received_at", "outcome", "detail"], orders);

  const operators = ["admin", "otto", "vera"];
  const audit = Array.from({ length: 20_000 }, (_, k) => [now - Math.floor(((20_000 - k) / 20_000) * 365 * DAY), operators[k % 3]!, k % 5 === 0 ? "job.retry" : "licence.suspend", serviceIdOf((k * 97) % services), null, "ok", "via the console"]);
  for (let a = 0; a < audit.length; a += 5000) await bulk.insert("audit", ["at", "actor", "action", "service_id", "job_id", "outcome", "detail"], audit.slice(a, a + 5000));

  // Terms ending 4 to 10 days from now: with the default RENEWAL_LEAD_DAYS of 3, each is due within the forecast's 7 days.
  const n = "CAST(substr(service_id, 5) AS BIGINT)";
  await bulk.exec(`UPDATE services SET expires_at = ${now + 4 * DAY} + (${n} % 7) * ${DAY}, paid_until = ${now + 34 * DAY} + (${n} % 7) * ${DAY}
    WHERE status = 'active' AND ${n} % 10 = 3`);
  if (bulk.kind === "postgres") await bulk.exec("VACUUM ANALYZE");
}

