import { describe, expect, it } from "vitest";
import { RENEW } from "../../src/intake/jobs.js";
import { renewalDue } from "../../src/intake/renewal-due.js";
import { jobOf } from "../../src/jobs/define.js";
import { addMonths } from "../../src/lifecycle/record.js";
import type { ServiceStatus } from "../../src/vocabulary/service-statuses.js";
import { serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import { orderActive, untilIdle, usePairPerFile, type Pair } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/**
 * One table of renewal cases (issue 35), each asked of the rule (`renewalDue`), the sweep, the
 * forecast and the renew job, which must give the same answer: the rule is one function, and
 * nothing on the way to it (a store's query, the forecast's walk over terms, the job's own
 * checks) may decide otherwise.
 *
 * Each case is a monthly licence bought from the sandbox whose row is then set as the case says:
 * its term ends tomorrow (within the default lead of 3 days), paid-until where the case puts it.
 */

const MINUTE = 60_000;
const DAY = 86_400_000;

interface Case {
  name: string;
  /** Paid-until from the term end. */
  paidUntil: (termEnd: number) => number | null;
  status?: ServiceStatus;
  /** Its renewal for this term was queued before and is blocked on the reseller's balance. */
  blocked?: true;
  due: boolean;
}

const cycleBeyond = (termEnd: number) => addMonths(termEnd, 1);

const CASES: Case[] = [
  { name: "paid until a day before the term end", paidUntil: (t) => t - DAY, due: false },
  { name: "paid until the term end", paidUntil: (t) => t, due: false },
  { name: "paid a minute beyond the term end", paidUntil: (t) => t + MINUTE, due: false },
  { name: "paid a day less a minute beyond the term end", paidUntil: (t) => t + DAY - MINUTE, due: false },
  { name: "paid exactly a day beyond the term end", paidUntil: (t) => t + DAY, due: true },
  { name: "paid a cycle beyond the term end", paidUntil: cycleBeyond, due: true },
  { name: "with no paid-until", paidUntil: () => null, due: false },
  { name: "suspended, paid a cycle beyond", paidUntil: cycleBeyond, status: "suspended", due: false },
  { name: "terminated, paid a cycle beyond", paidUntil: cycleBeyond, status: "terminated", due: false },
  { name: "pending, paid a cycle beyond", paidUntil: cycleBeyond, status: "pending", due: false },
  { name: "failed, paid a cycle beyond", paidUntil: cycleBeyond, status: "failed", due: false },
  { name: "paid a cycle beyond, its renewal blocked on the balance", paidUntil: cycleBeyond, blocked: true, due: true },
];

interface Answers {
  /** renewalDue, asked of the row as the case left it. */
  rule: boolean;
  /** The sweep queued a renewal of this term (now, or before: the blocked one). */
  sweep: boolean;
  /** GET /admin/forecast lists it among the week's renewals. */
  forecast: boolean;
  /** The renewal job of this term, run, bought it (once); otherwise it was skipped, buying nothing. */
  job: boolean;
}

const renewCharges = (sb: Pair["sb"], ip: string) => sb.sandbox.ledger().filter((c) => c.op === "renew" && c.ip === ip);

/** Buys a licence, sets its row as the case says, and asks the rule, the forecast, the sweep and the renew job about it. */
async function ask({ sb, bridge }: Pair, c: Case): Promise<Answers> {
  const { store } = bridge.service;
  const id = await orderActive(bridge);
  await untilIdle(bridge);
  const { ip, months } = (await store.services.get(id))!;
  const term = Date.now() + DAY;
  await store.services.change({ serviceId: id, patch: { expires_at: term, paid_until: c.paidUntil(term), status: c.status ?? "active" } });
  const verdict = renewalDue((await store.services.get(id))!, { now: Date.now(), leadMs: bridge.config.RENEWAL_LEAD_DAYS * DAY });
  const renewal = jobOf(RENEW, { term_end: term }, { serviceId: id, queueKey: serviceQueueKey(id) });
  if (c.blocked) {
    sb.sandbox.setBalance(0);
    await store.jobs.enqueue(renewal);
    await waitFor(async () => (await store.jobs.list({ kind: "renew", serviceId: id, state: "blocked" })).length === 1, 10_000, "the renewal blocked");
    sb.sandbox.setBalance(1000);
  }

  const forecast = (await bridge.admin("/admin/forecast?days=7")).body.due as { service_id: string }[];
  await bridge.service.sweep.sweep();
  const swept = (await store.jobs.list({ kind: "renew", serviceId: id })).some((j) => (j.payload as { term_end: number }).term_end === term);

  // The renewal of this term: the sweep's (or the blocked one), or one queued as a sweep that
  // read the row before it changed would have. A blocked one is re-run as the operator would.
  const { id: jobId } = await store.jobs.enqueue(renewal);
  if (c.blocked) await store.jobs.retry(jobId);
  await waitFor(async () => (await store.jobs.get(jobId))?.state === "succeeded", 10_000, "the renewal job to end");
  await untilIdle(bridge);
  const job = (await store.jobs.get(jobId))!;
  const charges = renewCharges(sb, ip);
  expect(charges.length).toBe(job.skipped ? 0 : 1);
  if (charges.length) expect(charges[0]).toMatchObject({ months });
  // A term not due is skipped saying the rule's own words.
  if (!verdict.due) expect(job.skipped).toBe(`${verdict.why}; nothing bought`);

  return { rule: verdict.due, sweep: swept, forecast: forecast.some((d) => d.service_id === id), job: charges.length === 1 && !job.skipped };
}

describe("renewal due: one table through the rule, the sweep, the forecast and the renew job", () => {
  // One pair for the file: every case has a service and an IP of its own, and the sweep's
  // answer is read from that service's renewal jobs.
  const pair = usePairPerFile();

  for (const c of CASES) {
    it(`${c.name}: ${c.due ? "due" : "not due"} to the rule, the sweep, the forecast and the renew job`, async () => {
      const answers = await ask(pair(), c);
      expect(answers).toEqual({ rule: c.due, sweep: c.due, forecast: c.due, job: c.due });
    });
  }
});
