import { describe, expect, it } from "vitest";
import { createAlerts } from "../../src/alerts/alerts.js";
import { checkQueueLag, QUEUE_LAG_ALERT } from "../../src/alerts/queue-lag.js";
import { silentLogger } from "../../src/log/logger.js";
import { encodeCursor } from "../../src/store/paging.js";
import { eachPage, type JobQuery, type NewService, type Page } from "../../src/store/store.js";
import { JOB_PRIORITY } from "../../src/vocabulary/jobs.js";
import { describeEachStore } from "../helpers/stores.js";

// Issue 25, reads at scale: every listing is a keyset page (limit, cursor, next_cursor, total),
// a walk of the pages meets each item once whatever arrives meanwhile, the search finds a licence
// by any of its keys, claims take customer mail ahead of a backlog, and the queue's lag is
// visible and alerts. On both stores.

const MINUTE = 60_000;

function newService(serviceId: string, ip: string, email: string): NewService {
  return {
    service_id: serviceId,
    product_id: "12",
    kind: "licence",
    type: "cpanel",
    bundle: null,
    variant: "vps",
    ip,
    billing_cycle: "monthly",
    months: 1,
    status: "pending",
    customer_email: email,
    customer_name: null,
    paid_until: null,
    order_event_id: null,
  };
}

/** What a job listing filters by. */
type JobFilter = Pick<JobQuery, "kind" | "state" | "serviceId">;

/** Every item of a walk of the pages, in order, with `between` run after each page (the writes that arrive meanwhile). */
async function walk<T>(read: (cursor: string | undefined) => Promise<Page<T>>, between: () => Promise<void> = async () => {}): Promise<T[]> {
  const items: T[] = [];
  for await (const page of eachPage(read)) {
    items.push(...page.items);
    await between();
  }
  return items;
}

describeEachStore("listings and the queue at scale on $name", {}, ({ store, clock }) => {
  /** A service as an accepted order writes it: the row and its received event. */
  const order = async (serviceId: string, ip = `203.0.113.${(Number(serviceId.replace(/\D/g, "")) % 250) + 1}`, email = `${serviceId}@example.com`) => {
    await store.events.accept(
      "billing",
      [{ webhookId: `order-${serviceId}`, event: { type: "service.created", service: { id: serviceId } }, queueKey: `svc:${serviceId}`, ip }],
      () => ({
        write: true,
        result: "ok",
        event: { type: "service.created", serviceId, payload: "{}", outcome: null, detail: null },
        order: { insert: newService(serviceId, ip, email) },
      }),
      () => true,
    );
  };
  const ids = (rows: { service_id: string }[]) => rows.map((r) => r.service_id);

  describe("licences", () => {
    it("a walk of the pages while orders arrive returns every licence that was there exactly once, in service id order", async () => {
      for (let i = 10; i < 40; i++) await order(`s${i}`);
      const before = ids(await store.services.list());
      let n = 0;
      // After each page, a service that sorts before the walk's position and one after it.
      const seen = await walk(
        (cursor) => store.services.page({ limit: 7, cursor }),
        async () => {
          n++;
          await order(`s${10 + n}x`);
          await order(`s9${n}`);
        },
      );
      const walked = ids(seen);
      expect(new Set(walked).size).toBe(walked.length);
      for (const id of before) expect(walked.filter((w) => w === id)).toEqual([id]);
      expect(walked).toEqual([...walked].sort());
    });

    it("answers the total beside the page, by status too, and null as the last page's cursor", async () => {
      for (let i = 1; i <= 5; i++) await order(`s${i}`);
      await store.services.change({ serviceId: "s2", patch: { status: "active" } });
      await store.services.change({ serviceId: "s4", patch: { status: "active" } });
      const first = await store.services.page({ limit: 2 });
      expect(first).toMatchObject({ total: 5, nextCursor: expect.any(String) });
      expect(ids(first.items)).toEqual(["s1", "s2"]);
      const active = await store.services.page({ limit: 2, status: "active" });
      expect(ids(active.items)).toEqual(["s2", "s4"]);
      expect(active).toMatchObject({ total: 2, nextCursor: null });
      expect(await store.services.page({ limit: 10, status: "terminated" })).toEqual({ items: [], nextCursor: null, total: 0 });
      // Past the last licence, with no filter: the page is empty and its total read on its own.
      expect(await store.services.page({ limit: 10, cursor: encodeCursor("licenses", ["s5"]) })).toEqual({ items: [], nextCursor: null, total: 5 });
    });

    it("finds a licence by service id, IP in any spelling, e-mail in any case or licence key, and with a status", async () => {
      await order("s1", "2001:db8::10", "Ann@Example.com");
      await order("s2", "203.0.113.20", "bob@example.com");
      const key = (await store.services.get("s1"))!.license_key;
      for (const q of ["s1", "2001:DB8:0:0::10", "ann@example.COM", key]) {
        const page = await store.services.page({ limit: 100, q });
        expect(ids(page.items), q).toEqual(["s1"]);
        expect(page.total).toBe(1);
      }
      expect(ids((await store.services.page({ limit: 100, q: "203.0.113.20" })).items)).toEqual(["s2"]);
      expect((await store.services.page({ limit: 100, q: "s1", status: "active" })).total).toBe(0);
      expect((await store.services.page({ limit: 100, q: "nobody@example.com" })).items).toEqual([]);
    });
  });

  describe("jobs", () => {
    it("a walk of the pages while jobs are queued returns every job that was there exactly once, newest first", async () => {
      const before: number[] = [];
      for (let i = 0; i < 23; i++) before.push((await store.jobs.enqueue({ kind: i % 2 ? "renew" : "register", queueKey: `q${i}` })).id);
      const seen = await walk(
        (cursor) => store.jobs.page({ limit: 5, cursor }),
        async () => void (await store.jobs.enqueue({ kind: "renew" })),
      );
      const walked = seen.map((j) => j.id);
      expect(walked).toEqual([...before].reverse());
    });

    it("filters by state, kind and service, each with its total", async () => {
      for (let i = 0; i < 4; i++) await store.jobs.enqueue({ kind: "renew", serviceId: "s1", queueKey: "svc:s1" });
      await store.jobs.enqueue({ kind: "register", serviceId: "s2", queueKey: "svc:s2" });
      const [running] = await store.jobs.claim("w1", 1, 30_000);
      expect(running?.serviceId).toBe("s1");
      expect((await store.jobs.page({ limit: 2, kind: "renew" })).total).toBe(4);
      expect(await store.jobs.page({ limit: 2, state: "running" })).toMatchObject({ total: 1, items: [{ id: running!.id }] });
      const s1Queued = await store.jobs.page({ limit: 2, serviceId: "s1", state: "queued" });
      expect(s1Queued).toMatchObject({ total: 3, nextCursor: expect.any(String) });
      expect((await store.jobs.page({ limit: 2, serviceId: "s2" })).total).toBe(1);
      expect(await store.jobs.counts()).toEqual({ queued: 4, running: 1, succeeded: 0, failed: 0, blocked: 0, cancelled: 0 });
    });

    // The filters together, as the admin API and the CLI combine them: by kind and state (the
    // counters), by service with a state and a kind (the service's own range), and no filter at all.
    it("filters by kind and state together, and by service with its state and kind, each with its total", async () => {
      for (let i = 0; i < 3; i++) await store.jobs.enqueue({ kind: "renew", serviceId: "s1", queueKey: "svc:s1" });
      await store.jobs.enqueue({ kind: "register", serviceId: "s1", queueKey: "svc:s1b" });
      await store.jobs.enqueue({ kind: "renew", serviceId: "s2", queueKey: "svc:s2" });
      const [running] = await store.jobs.claim("w1", 1, 30_000);
      expect(running).toMatchObject({ kind: "renew", serviceId: "s1" });
      expect(await store.jobs.page({ limit: 10, kind: "renew", state: "running" })).toMatchObject({ total: 1, items: [{ id: running!.id }] });
      expect((await store.jobs.page({ limit: 10, kind: "renew", state: "queued" })).total).toBe(3);
      const s1 = await store.jobs.page({ limit: 1, serviceId: "s1", state: "queued", kind: "renew" });
      expect(s1).toMatchObject({ total: 2, items: [{ kind: "renew", serviceId: "s1", state: "queued" }], nextCursor: expect.any(String) });
      expect((await store.jobs.page({ limit: 10, serviceId: "s1", state: "queued", kind: "register" })).total).toBe(1);
      expect((await store.jobs.page({ limit: 10 })).total).toBe(5);
    });

    it("tells the total on an empty page too: the rows after the cursor left the filter", async () => {
      await store.jobs.enqueue({ kind: "renew", queueKey: "q1" });
      await store.jobs.enqueue({ kind: "renew", queueKey: "q2" });
      const first = await store.jobs.page({ limit: 1, state: "queued" });
      expect(first).toMatchObject({ total: 2, nextCursor: expect.any(String) });
      const [older] = await store.jobs.claim("w1", 1, 30_000);
      await store.jobs.finish(older!, "w1", { state: "succeeded" });
      expect(await store.jobs.page({ limit: 1, state: "queued", cursor: first.nextCursor! })).toEqual({ items: [], nextCursor: null, total: 1 });
      expect(await store.jobs.page({ limit: 1, serviceId: "nobody" })).toEqual({ items: [], nextCursor: null, total: 0 });
    });

    it("tells the total on an empty page of any filter, and of none: a cursor past every job", async () => {
      const renew = await store.jobs.enqueue({ kind: "renew", serviceId: "s1", queueKey: "svc:s1" });
      await store.jobs.enqueue({ kind: "register", serviceId: "s1", queueKey: "svc:s1" });
      const cursor = encodeCursor("jobs", [renew.id]);
      const filters: [JobFilter, number][] = [
        [{}, 2],
        [{ kind: "register" }, 1],
        [{ state: "queued" }, 2],
        [{ kind: "register", state: "queued" }, 1],
        [{ serviceId: "s1" }, 2],
        [{ serviceId: "s1", state: "queued" }, 2],
        [{ serviceId: "s1", state: "queued", kind: "register" }, 1],
      ];
      for (const [filter, total] of filters) {
        expect(await store.jobs.page({ limit: 5, cursor, ...filter }), JSON.stringify(filter)).toEqual({ items: [], nextCursor: null, total });
      }
    });
  });

  describe("history", () => {
    it("pages a service's whole history newest first, the walk the history in reverse", async () => {
      await order("s1");
      for (let i = 0; i < 12; i++) {
        clock.advance(1000);
        await store.services.change({ serviceId: "s1", history: [{ action: `step ${i}` }, { action: `note ${i}` }] });
      }
      const all = await store.services.history("s1");
      expect(all).toHaveLength(25);
      const first = await store.services.historyPage("s1", { limit: 10 });
      expect(first.total).toBe(25);
      const walked = await walk((cursor) => store.services.historyPage("s1", { limit: 4, cursor }));
      expect(walked).toEqual([...all].reverse());
      expect(await store.services.historyPage("nobody", { limit: 10 })).toEqual({ items: [], nextCursor: null, total: 0 });
    });
  });

  describe("the queue", () => {
    it("claims an install mail ahead of a backlog queued before it", async () => {
      for (let i = 0; i < 50; i++) await store.jobs.enqueue({ kind: "renew", queueKey: `svc:b${i}` });
      const mail = await store.jobs.enqueue({ kind: "mail_install", queueKey: "mail:s1", priority: JOB_PRIORITY.mail });
      const [first, ...rest] = await store.jobs.claim("w1", 3, 30_000);
      expect(first?.id).toBe(mail.id);
      expect(rest.map((j) => j.kind)).toEqual(["renew", "renew"]);
    });

    it("keeps one queue's order whatever the priorities: a mail behind its service's job waits for it", async () => {
      const register = await store.jobs.enqueue({ kind: "register", queueKey: "svc:s1" });
      await store.jobs.enqueue({ kind: "mail_install", queueKey: "svc:s1", priority: JOB_PRIORITY.mail });
      expect((await store.jobs.claim("w1", 5, 30_000)).map((j) => j.id)).toEqual([register.id]);
    });

    it("tells the depth and the oldest due job, which a job waiting for a later time is not", async () => {
      expect(await store.jobs.queue()).toEqual({ queued: {}, oldestDueAt: null, oldestDueAgeMs: 0 });
      const dueAt = clock.now();
      await store.jobs.enqueue({ kind: "renew", queueKey: "svc:a" });
      await store.jobs.enqueue({ kind: "renew", queueKey: "svc:a" });
      await store.jobs.enqueue({ kind: "register", queueKey: "svc:b", delayMs: 60 * MINUTE });
      clock.advance(5 * MINUTE);
      expect(await store.jobs.queue()).toEqual({ queued: { renew: 2, register: 1 }, oldestDueAt: dueAt, oldestDueAgeMs: 5 * MINUTE });
    });

    it("reads a scrape's gauges together, as the counts, the queue and the open alerts have them", async () => {
      expect(await store.gauges()).toEqual({
        jobs: { queued: 0, running: 0, succeeded: 0, failed: 0, blocked: 0, cancelled: 0 },
        queue: { queued: {}, oldestDueAt: null, oldestDueAgeMs: 0 },
        openAlerts: 0,
      });
      const dueAt = clock.now();
      await store.jobs.enqueue({ kind: "renew", queueKey: "svc:a" });
      await store.jobs.enqueue({ kind: "register", queueKey: "svc:b", delayMs: 60 * MINUTE });
      await store.jobs.enqueue({ kind: "register", queueKey: "svc:c" });
      const [claimed] = await store.jobs.claim("w1", 1, 30_000);
      await store.jobs.finish(claimed!, "w1", { state: "succeeded" });
      await store.alerts.raise("balance", "low balance", "detail");
      clock.advance(5 * MINUTE);
      const gauges = await store.gauges();
      expect(gauges).toEqual({ jobs: await store.jobs.counts(), queue: await store.jobs.queue(), openAlerts: (await store.alerts.open()).length });
      expect(gauges).toEqual({
        jobs: { queued: 2, running: 0, succeeded: 1, failed: 0, blocked: 0, cancelled: 0 },
        queue: { queued: { register: 2 }, oldestDueAt: dueAt, oldestDueAgeMs: 5 * MINUTE },
        openAlerts: 1,
      });
    });

    it("raises the queue-lag alert once the oldest due job has waited longer than the threshold, and resolves it when none has", async () => {
      const alerts = createAlerts({ store, logger: silentLogger() });
      await store.jobs.enqueue({ kind: "renew", queueKey: "svc:a" });
      clock.advance(15 * MINUTE);
      expect(await checkQueueLag(store, alerts, 15 * MINUTE)).toEqual({ lagging: false, ageMs: 15 * MINUTE });
      expect(await alerts.open()).toEqual([]);
      clock.advance(MINUTE);
      expect((await checkQueueLag(store, alerts, 15 * MINUTE)).lagging).toBe(true);
      expect(await alerts.open()).toEqual([expect.objectContaining({ key: QUEUE_LAG_ALERT, subject: expect.stringContaining("16 minutes") })]);
      const [job] = await store.jobs.claim("w1", 1, 30_000);
      await store.jobs.finish(job!, "w1", { state: "succeeded" });
      expect((await checkQueueLag(store, alerts, 15 * MINUTE)).lagging).toBe(false);
      expect(await alerts.open()).toEqual([]);
    });
  });
});
