import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import type { Job } from "../../src/vocabulary/jobs.js";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { readPgMigrations } from "../../src/store/postgres/migrations.js";
import { JOB_READY_CHANNEL } from "../../src/store/postgres/notify.js";
import type { AcceptedItem, IntakeDecision, IntakeItem, IntakeView, Store } from "../../src/store/store.js";
import type { BillingEvent } from "../../src/intake/event-schema.js";
import { freshDatabase, openSession, type Session } from "../helpers/postgres.js";
import { anotherInstance, postgresFactory } from "../helpers/stores.js";
import { waitFor } from "../helpers/wait.js";

// Several instances on one PostgreSQL database keep the promises of one (service contract,
// section 10). Each test opens two stores, each with its own pool, on the same database, and
// lets them race for real on the database's clock.

const DAY = 86_400_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function order(serviceId: string, ip: string): IntakeItem<BillingEvent> {
  const event: BillingEvent = { type: "service.created", service: { id: serviceId, product_id: "12", billing_cycle: "monthly", ip, customer: { email: "c@example.com" } } };
  return { webhookId: `order-${serviceId}`, event, queueKey: serviceQueueKey(serviceId), ip };
}

/** Orders: refused when another service holds the IP (one licence, one service). */
function decide(it: IntakeItem<BillingEvent>, view: IntakeView): IntakeDecision<"accepted" | "refused"> {
  if (view.holders.length > 0 || view.existing) return { write: false, result: "refused" };
  const { service } = it.event;
  return {
    write: true,
    result: "accepted",
    event: { type: it.event.type, serviceId: service.id, payload: JSON.stringify(it.event), outcome: null, detail: null },
    order: {
      insert: {
        service_id: service.id,
        product_id: "12",
        kind: "licence",
        type: "cpanel",
        bundle: null,
        variant: "vps",
        ip: service.ip!,
        billing_cycle: "monthly",
        months: 1,
        status: "pending",
        customer_email: null,
        customer_name: null,
        paid_until: null,
        order_event_id: null,
      },
    },
    job: { kind: "register", serviceId: service.id, queueKey: serviceQueueKey(service.id) },
  };
}
const keepAll = (_: AcceptedItem<unknown>[]) => true;

describe("several instances on one PostgreSQL database", () => {
  if (postgresFactory.skip) {
    it.skip(`skipped: ${postgresFactory.skip}`, () => {});
    return;
  }

  let a: PostgresStore;
  let b: PostgresStore;
  let url: string;
  /** Another session on the database: a third party's locks and a look at who waits or listens. */
  let other: Session;

  beforeEach(async () => {
    url = (await freshDatabase()).url;
    a = await anotherInstance(url, { clock: "database" });
    await a.migrate();
    b = await anotherInstance(url, { clock: "database" });
    other = await openSession(url);
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close(), other.close()]);
  });

  it("never leases one job twice, never runs two jobs of a queue at once, and starts each queue's jobs in order", async () => {
    const QUEUES = 12;
    const PER_QUEUE = 6;
    const FREE = 12;
    // Both instances enqueue into the same queues at once while both claim: ids are drawn
    // concurrently, so queue order rests on the store's queue locks.
    const producers = [a, b].map(async (store, p) => {
      for (let n = 0; n < PER_QUEUE / 2; n++) {
        await Promise.all(Array.from({ length: QUEUES }, (_, q) => store.jobs.enqueue({ kind: "work", queueKey: `q${q}`, payload: { p, n } })));
      }
      for (let n = 0; n < FREE / 2; n++) await store.jobs.enqueue({ kind: "work", payload: { free: n } });
    });
    const total = QUEUES * PER_QUEUE + FREE;

    const leased = new Set<number>();
    const runningIn = new Map<string, number>();
    const started = new Map<string, number[]>();
    const problems: string[] = [];
    let done = 0;

    const run = async (store: Store, job: Job, worker: string) => {
      if (leased.has(job.id)) problems.push(`job ${job.id} leased twice (now by ${worker})`);
      leased.add(job.id);
      if (job.queueKey) {
        const other = runningIn.get(job.queueKey);
        if (other !== undefined) problems.push(`${job.queueKey}: job ${job.id} started while job ${other} runs`);
        runningIn.set(job.queueKey, job.id);
        started.set(job.queueKey, [...(started.get(job.queueKey) ?? []), job.id]);
      }
      await sleep(Math.random() * 4);
      if (job.queueKey) runningIn.delete(job.queueKey);
      expect(await store.jobs.finish(job, worker, { state: "succeeded" })).toBe("succeeded");
      done++;
    };
    const worker = async (store: Store, name: string) => {
      const deadline = Date.now() + 20_000;
      while (done < total && Date.now() < deadline) {
        const jobs = await store.jobs.claim(name, 3, 60_000);
        if (jobs.length === 0) await sleep(2);
        await Promise.all(jobs.map((job) => run(store, job, name)));
      }
    };
    await Promise.all([...producers, ...[a, b].flatMap((store, s) => [1, 2, 3].map((w) => worker(store, `i${s}:w${w}`)))]);

    expect(problems).toEqual([]);
    expect(done).toBe(total);
    expect(await a.jobs.counts()).toMatchObject({ succeeded: total, queued: 0, running: 0 });
    for (const [queue, ids] of started) expect(ids, queue).toEqual([...ids].sort((x, y) => x - y));
  });

  it("gives a queue's jobs ids in commit order: a job queued behind an enqueue still in flight waits for it", async () => {
    // Another session holds an uncommitted job with the unique key A's enqueue will use: A draws
    // its id and then waits for that session at its insert.
    await other.holdUncommittedJob("k");
    const first = a.jobs.enqueue({ kind: "work", queueKey: "svc:1", uniqueKey: "k" });
    await waitFor(async () => (await other.waiting("transactionid")) > 0, 10_000, "the first enqueue to wait at its insert");
    const second = b.jobs.enqueue({ kind: "work", queueKey: "svc:1" });
    const how = await Promise.race([
      second.then(() => "committed first"),
      waitFor(async () => (await other.waiting("advisory")) > 0, 10_000, "the second enqueue to wait for the queue").then(
        () => "waits",
        () => "neither",
      ),
    ]);
    expect(how).toBe("waits");
    // Had the later job committed first, it would start now, ahead of the earlier one.
    expect(await b.jobs.claim("w", 5, 60_000)).toEqual([]);
    await other.rollback();
    const [x, y] = [await first, await second];
    expect(x.id).toBeLessThan(y.id);
    expect((await b.jobs.claim("w", 5, 60_000)).map((j) => j.id)).toEqual([x.id]);
  });

  it("accepts a webhook id once when two instances receive it at once", async () => {
    const deliveries = Array.from({ length: 10 }, (_, i) => order(`s${i}`, `203.0.113.${i + 1}`));
    const results = await Promise.all(deliveries.flatMap((d) => [a, b].map((store) => store.events.accept("billing", [d], decide, keepAll))));
    for (let i = 0; i < deliveries.length; i++) {
      const [x, y] = [results[2 * i]!.items[0]!, results[2 * i + 1]!.items[0]!];
      const accepted = [x, y].filter((r) => "result" in r && r.result === "accepted") as { eventId: string }[];
      const duplicates = [x, y].filter((r) => "duplicate" in r) as { duplicate: string; type: string }[];
      expect(accepted).toHaveLength(1);
      expect(duplicates).toEqual([{ duplicate: accepted[0]!.eventId, type: "service.created" }]);
    }
    expect(await a.counts()).toMatchObject({ events: 10, services: 10, jobs: 10 });
  });

  it("gives an IP to one service when two instances take orders for it at once", async () => {
    for (let round = 0; round < 5; round++) {
      const ip = `198.51.100.${round + 1}`;
      const [x, y] = await Promise.all([
        a.events.accept("billing", [order(`r${round}-a`, ip)], decide, keepAll),
        b.events.accept("billing", [order(`r${round}-b`, ip)], decide, keepAll),
      ]);
      expect([x.items[0], y.items[0]].map((r) => (r && "result" in r ? r.result : "duplicate")).sort()).toEqual(["accepted", "refused"]);
    }
    expect((await a.counts()).services).toBe(5);
  });

  it("renews each term once when the sweep ticks on two instances at once", async () => {
    const now = Date.now();
    for (let i = 0; i < 40; i++) {
      await a.events.accept("billing", [order(`s${i}`, `203.0.113.${i + 1}`)], decide, keepAll);
      await a.services.change({ serviceId: `s${i}`, patch: { status: "active", expires_at: now + 2 * DAY, paid_until: now + 30 * DAY } });
    }
    const renewal = (due: { service_id: string; expires_at: number }) => ({
      kind: "renew",
      serviceId: due.service_id,
      queueKey: serviceQueueKey(due.service_id),
      uniqueKey: `renew:${due.service_id}:${due.expires_at}`,
    });
    const sweeps = await Promise.all([a, b, a, b].map((store) => store.renewals.sweep(7 * DAY, renewal)));
    const created = sweeps.flat().filter((r) => r.created);
    expect(created.map((r) => r.due.service_id).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `s${i}`).sort());
    // Every sweep names the same job for a term, whoever created it.
    for (const sweep of sweeps) {
      expect(new Map(sweep.map((r) => [r.due.service_id, r.id]))).toEqual(new Map(created.map((r) => [r.due.service_id, r.id])));
    }
    expect(await b.jobs.list({ kind: "renew" })).toHaveLength(40);
  });

  it("opens an alert episode once, with one mail, when two instances raise it at once", async () => {
    const mail = (openedAt: number) => ({ kind: "mail_alert", payload: { openedAt } });
    const opened = await Promise.all([a, b, a, b].map((store) => store.alerts.raise("upstream", "Upstream down", "timeouts", mail)));
    expect(opened.filter(Boolean)).toHaveLength(1);
    expect(await a.alerts.open()).toMatchObject([{ key: "upstream", count: 4 }]);
    expect(await a.jobs.list({ kind: "mail_alert" })).toHaveLength(1);
  });

  it("wakes another instance's runner through NOTIFY, and its own only once", async () => {
    let there = 0;
    let here = 0;
    b.onJobReady(() => there++);
    a.onJobReady(() => here++);
    // Wait until both LISTEN connections are in place: a notification sent before is not heard.
    await waitFor(async () => (await other.listening(JOB_READY_CHANNEL)).length === 2, 10_000, "both instances to LISTEN");
    await a.jobs.enqueue({ kind: "work" });
    expect(here).toBe(1);
    await waitFor(() => there === 1, 10_000, "the other instance to be woken");
    // A delayed job wakes nobody; another runnable one wakes the other instance again.
    await a.jobs.enqueue({ kind: "work", delayMs: 60_000 });
    await b.jobs.enqueue({ kind: "work" });
    await waitFor(() => here === 2, 10_000, "this instance to be woken by the other");
    expect(there).toBe(2);
    // One more runnable job from each side, heard by the other: notifications arrive in commit order,
    // so a stray wake (from the delayed job, or an instance hearing its own) would have come before these.
    await a.jobs.enqueue({ kind: "work" });
    await waitFor(() => there === 3, 10_000, "the other instance to hear the marker");
    await b.jobs.enqueue({ kind: "work" });
    await waitFor(() => here === 4, 10_000, "this instance to hear the marker");
    expect([here, there]).toEqual([4, 4]);
  });

  it("still wakes the instances when a store closes right after its write (the CLI's `jobs retry`)", async () => {
    let there = 0;
    b.onJobReady(() => there++);
    await waitFor(async () => (await other.listening(JOB_READY_CHANNEL)).length === 1, 10_000, "the LISTEN connection");
    const cli = await anotherInstance(url, { clock: "database" });
    await cli.jobs.enqueue({ kind: "work" });
    await cli.close();
    await waitFor(() => there === 1, 10_000, "the instance to be woken");
  });

  it("listens again when its LISTEN connection is cut, and looks for work it may have missed", async () => {
    let there = 0;
    b.onJobReady(() => there++);
    const listening = () => other.listening(JOB_READY_CHANNEL);
    const [first] = await waitFor(async () => ((await listening()).length === 1 ? listening() : undefined), 10_000, "the LISTEN connection");
    await other.terminate(first!);
    // Back: a new connection, and one wake-up for whatever was announced while it was away.
    await waitFor(async () => (await listening()).some((pid) => pid !== first), 10_000, "a new LISTEN connection");
    await waitFor(() => there === 1, 10_000, "the wake-up after reconnecting");
    await a.jobs.enqueue({ kind: "work" });
    await waitFor(() => there === 2, 10_000, "a notification on the new connection");
  });

  it("hands the jobs of an instance that died to another once their lease has run out", async () => {
    const { id } = await a.jobs.enqueue({ kind: "work", queueKey: "svc:1" });
    const next = await a.jobs.enqueue({ kind: "work", queueKey: "svc:1" });
    expect((await a.jobs.claim("dead-instance", 5, 300)).map((j) => j.id)).toEqual([id]);
    await a.close();
    const taken = await waitFor(async () => (await b.jobs.claim("survivor", 5, 60_000))[0], 10_000, "the lease to run out");
    expect(taken).toMatchObject({ id, attempts: 2, leasedBy: "survivor" });
    await b.jobs.finish(taken, "survivor", { state: "succeeded" });
    expect((await b.jobs.claim("survivor", 5, 60_000)).map((j) => j.id)).toEqual([next.id]);
    a = await anotherInstance(url, { clock: "database" });
  });

  it("migrates once when instances start at once", async () => {
    const { url: empty } = await freshDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => anotherInstance(empty, { clock: "database" })));
    try {
      const applied = await Promise.all(stores.map((s) => s.migrate()));
      const all = readPgMigrations();
      const latest = all.at(-1)!.id;
      // One instance applies every migration (their count: the numbers need not be contiguous).
      expect(applied.map((m) => m.length).sort()).toEqual([0, 0, all.length]);
      expect(await stores[0]!.migrationStatus()).toEqual({ databaseVersion: latest, codeVersion: latest, pending: [] });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("refuses a database migrated by a newer release", async () => {
    const latest = readPgMigrations().at(-1)!.id;
    await other.recordMigration(latest + 1, "from_the_future");
    await expect(b.migrate()).rejects.toMatchObject({ name: "DatabaseNewerThanCodeError", databaseVersion: latest + 1, codeVersion: latest });
  });

  it("answers the write probe within two seconds while another session holds the lock it needs", async () => {
    await other.holdTableLock("migrations");
    const t = Date.now();
    expect(await a.health.writable()).toMatch(/^not writable: /);
    expect(Date.now() - t).toBeLessThan(2_500);
    await other.rollback();
    expect(await a.health.writable()).toBeUndefined();
  });
});
