import { expect, it } from "vitest";
import { encodeCursor } from "../../src/store/store.js";
import { serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import type { BillingEvent } from "../../src/intake/event-schema.js";
import { describeEachStore } from "../helpers/stores.js";

// The console's store operations (migration 012), kept alike by both stores.

const DAY = 86_400_000;

describeEachStore("the console's store operations on $name", { startAt: Date.UTC(2026, 0, 10), maxAttempts: 3 }, ({ store, clock }) => {
  /** An order through the store's intake, as the deciding core would write it. */
  const order = async (serviceId: string, ip: string, email: string) => {
    const event: BillingEvent = { type: "service.created", service: { id: serviceId, product_id: "12", billing_cycle: "monthly", ip, customer: { email } } };
    await store.events.accept(
      "billing",
      [{ webhookId: `order-${serviceId}`, event, queueKey: serviceQueueKey(serviceId), ip }],
      () => ({
        write: true,
        result: "accepted",
        event: { type: event.type, serviceId, payload: JSON.stringify(event), outcome: null, detail: null },
        order: {
          insert: {
            service_id: serviceId, product_id: "12", kind: "licence", type: "cpanel", bundle: null, variant: "vps", ip,
            billing_cycle: "monthly", months: 1, status: "pending", customer_email: email, customer_name: null, paid_until: null, order_event_id: null,
          },
        },
        job: { kind: "register", serviceId, queueKey: serviceQueueKey(serviceId) },
      }),
      () => true,
    );
  };

  it("keeps a session under the hash of its id until it is deleted", async () => {
    await store.sessions.create("h1", { operator: "ann", role: "operator", created_at: 1000, last_seen_at: 1000 });
    expect(await store.sessions.get("h1")).toEqual({ operator: "ann", role: "operator", created_at: 1000, last_seen_at: 1000 });
    await store.sessions.touch("h1", 5000);
    expect((await store.sessions.get("h1"))?.last_seen_at).toBe(5000);
    expect(await store.sessions.delete("h1")).toBe(true);
    expect(await store.sessions.get("h1")).toBeUndefined();
    expect(await store.sessions.delete("h1")).toBe(false);
  });

  it("deletes the sessions idle too long or older than the absolute limit, and only those", async () => {
    await store.sessions.create("idle", { operator: "a", role: "viewer", created_at: 9000, last_seen_at: 9000 });
    await store.sessions.create("old", { operator: "b", role: "viewer", created_at: 100, last_seen_at: 20_000 });
    await store.sessions.create("fresh", { operator: "c", role: "admin", created_at: 15_000, last_seen_at: 20_000 });
    expect(await store.sessions.deleteExpired(10_000, 1000)).toBe(2);
    expect(await store.sessions.get("fresh")).toBeDefined();
    expect(await store.sessions.get("idle")).toBeUndefined();
  });

  it("ends every session of one operator, and only theirs (a reload changed their token or role)", async () => {
    await store.sessions.create("ann-1", { operator: "ann", role: "operator", created_at: 1000, last_seen_at: 1000 });
    await store.sessions.create("ann-2", { operator: "ann", role: "operator", created_at: 2000, last_seen_at: 2000 });
    await store.sessions.create("bob-1", { operator: "bob", role: "viewer", created_at: 1000, last_seen_at: 1000 });
    expect(await store.sessions.deleteFor("ann")).toBe(2);
    expect(await store.sessions.get("ann-1")).toBeUndefined();
    expect(await store.sessions.get("ann-2")).toBeUndefined();
    expect(await store.sessions.get("bob-1")).toBeDefined();
    expect(await store.sessions.deleteFor("ann")).toBe(0);
  });

  it("finds a licence by service id, IP, licence key and e-mail in any case, a page at a time", async () => {
    await order("s1", "203.0.113.1", "Ann@Example.com");
    await order("s2", "203.0.113.2", "ann@example.com");
    await order("s3", "203.0.113.3", "bob@example.com");
    // The console lists through the admin API's listing (services.page), the provider filter with it.
    const ids = (page: { items: { service_id: string }[] }) => page.items.map((r) => r.service_id);
    const after = (id: string) => encodeCursor("licenses", [id]);
    expect(ids(await store.services.page({ q: "s3", limit: 10 }))).toEqual(["s3"]);
    expect(ids(await store.services.page({ q: "203.0.113.2", limit: 10 }))).toEqual(["s2"]);
    expect(ids(await store.services.page({ q: "ANN@example.com", limit: 10 }))).toEqual(["s1", "s2"]);
    const key = (await store.services.get("s1"))!.license_key;
    expect(ids(await store.services.page({ q: key, limit: 10 }))).toEqual(["s1"]);
    expect(ids(await store.services.page({ q: "ann@example.com", limit: 1 }))).toEqual(["s1"]);
    expect(ids(await store.services.page({ q: "ann@example.com", cursor: after("s1"), limit: 1 }))).toEqual(["s2"]);
    expect(ids(await store.services.page({ status: "pending", cursor: after("s1"), limit: 10 }))).toEqual(["s2", "s3"]);
    expect(ids(await store.services.page({ q: "s3", status: "active", limit: 10 }))).toEqual([]);
    expect(ids(await store.services.page({ provider: "reseller", status: "pending", limit: 10 }))).toEqual(["s1", "s2", "s3"]);
    expect(ids(await store.services.page({ provider: "cln", limit: 10 }))).toEqual([]);
    // No search and no status: every licence, a page at a time.
    expect(ids(await store.services.page({ limit: 2 }))).toEqual(["s1", "s2"]);
    expect(ids(await store.services.page({ cursor: after("s2"), limit: 2 }))).toEqual(["s3"]);
  });

  it("counts licences by status and orders by day", async () => {
    await order("s1", "203.0.113.1", "a@example.com");
    clock.advance(DAY);
    await order("s2", "203.0.113.2", "b@example.com");
    await order("s3", "203.0.113.3", "c@example.com");
    expect(await store.consoleReads.statusCounts()).toEqual({ pending: 3 });
    // A status no service has any more is left out, though its counter row stays behind.
    for (const id of ["s1", "s2", "s3"]) await store.services.change({ serviceId: id, patch: { status: "active" } });
    expect(await store.consoleReads.statusCounts()).toEqual({ active: 3 });
    const today = Math.floor(clock.now() / DAY);
    const days = await store.consoleReads.daily(clock.now() - 30 * DAY);
    // PostgreSQL stamps events with its own clock unless given one: only the totals are the same on both.
    expect(days.reduce((n, d) => n + d.orders, 0)).toBe(3);
    expect(days.every((d) => d.day <= today + 1 && d.renewals === 0 && d.failures === 0)).toBe(true);
  });

  it("counts renewals bought and jobs stopped on the UTC day each job last changed, from `since` on", async () => {
    /** A job of `kind` queued, claimed and ended now. */
    const ended = async (kind: string, ending: "succeeded" | "failed" | "blocked") => {
      const { id } = await store.jobs.enqueue({ kind, queueKey: `q-${kind}-${clock.now()}-${ending}` });
      const [job] = await store.jobs.claim("w1", 10, 60_000);
      expect(job?.id).toBe(id);
      await store.jobs.finish(job!, "w1", ending === "succeeded" ? { state: "succeeded" } : { state: ending, error: "no", code: "job_failed" });
      return id;
    };
    const day0 = Math.floor(clock.now() / DAY);
    clock.advance(3_600_000);
    await ended("renew", "succeeded");
    clock.advance(2 * 3_600_000);
    const retried = await ended("register", "failed");
    await ended("register", "succeeded");
    clock.advance(2 * DAY);
    await ended("renew", "succeeded");
    await ended("renew", "succeeded");
    await ended("renew", "blocked");
    await ended("mail_install", "failed");
    // A stopped job the operator retried no longer counts as stopped.
    await store.jobs.retry(retried);
    const day2 = Math.floor(clock.now() / DAY);
    expect(await store.consoleReads.daily(day0 * DAY)).toEqual([
      { day: day0, orders: 0, renewals: 1, failures: 0 },
      { day: day2, orders: 0, renewals: 2, failures: 2 },
    ]);
    // From two hours into day 0: the renewal an hour in is before it.
    expect(await store.consoleReads.daily(day0 * DAY + 2 * 3_600_000)).toEqual([{ day: day2, orders: 0, renewals: 2, failures: 2 }]);
    expect(await store.consoleReads.daily(clock.now() + 1)).toEqual([]);
  });

  it("lists a service's mails, newest first", async () => {
    await order("s1", "203.0.113.1", "a@example.com");
    const base = { kind: "install", event_id: null, job_id: 1, service_id: "s1", to_address: "a@example.com", subject: "Your licence", message_id: "<m@x>" };
    await store.mails.begin({ ...base, mail_key: "k1" });
    await store.mails.begin({ ...base, mail_key: "k2" });
    expect((await store.consoleReads.mailsOf("s1", 10)).map((m) => m.mail_key)).toEqual(["k2", "k1"]);
  });
});
