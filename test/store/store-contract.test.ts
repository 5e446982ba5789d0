import { beforeEach, describe, expect, it } from "vitest";
import { serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import { readPgMigrations } from "../../src/store/postgres/migrations.js";
import { readMigrations } from "../../src/store/sqlite/migrations.js";
import type { AcceptedItem, IntakeDecision, IntakeItem, IntakeView, NewService, RenewalCandidate, ServicePatch, StopRecord } from "../../src/store/store.js";
import { renewalDue } from "../../src/intake/renewal-due.js";
import type { BillingEvent } from "../../src/intake/event-schema.js";
import { describeEachStore } from "../helpers/stores.js";

// The Store's business operations, written once and kept by both stores; every check reads the
// rows back through the store's own operations.

const DAY = 86_400_000;

type Verdict = "accepted" | "refused" | "unknown";

function created(serviceId: string, ip: string): BillingEvent {
  return { type: "service.created", service: { id: serviceId, product_id: "12", billing_cycle: "monthly", ip, customer: { email: "c@example.com" } } };
}

function ipChanged(serviceId: string, ip: string): BillingEvent {
  return { type: "service.ip_changed", service: { id: serviceId }, changes: { ip } };
}

function item(webhookId: string, event: BillingEvent): IntakeItem<BillingEvent> {
  const ip = event.type === "service.created" ? event.service.ip : event.changes?.ip;
  return { webhookId, event, queueKey: serviceQueueKey(event.service.id), ip };
}

function newService(serviceId: string, ip: string): NewService {
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
    customer_email: "c@example.com",
    customer_name: null,
    paid_until: null,
    order_event_id: null,
  };
}

/**
 * A small intake for the tests: an order is refused when another service holds its IP, an IP
 * change queues a change_ip job (its target counts as held), anything else needs the service.
 */
function decide(seen: IntakeView[] = []) {
  return (it: IntakeItem<BillingEvent>, view: IntakeView): IntakeDecision<Verdict> => {
    seen.push(view);
    const { event } = it;
    if (event.type !== "service.created" && !view.existing) return { write: false, result: "unknown" };
    if (view.holders.length > 0) return { write: false, result: "refused" };
    const serviceId = event.service.id;
    const base = { type: event.type, serviceId, payload: JSON.stringify(event), outcome: null, detail: null };
    if (event.type === "service.created") {
      return {
        write: true,
        result: "accepted",
        event: base,
        order: { insert: newService(serviceId, event.service.ip!) },
        job: { kind: "register", serviceId, queueKey: serviceQueueKey(serviceId) },
      };
    }
    return {
      write: true,
      result: "accepted",
      event: base,
      patch: { ip_changes: view.existing!.ip_changes + 1 },
      job: { kind: "change_ip", serviceId, queueKey: serviceQueueKey(serviceId), payload: { ip: event.changes!.ip } },
    };
  };
}

/** A delivery is kept only when nothing in it was refused. */
const allOrNothing = (results: AcceptedItem<Verdict>[]) => !results.some((r) => "result" in r && r.result === "refused");

it("has the same migrations, by number and name, in both dialects (the migrations table records both)", () => {
  const names = (list: { id: number; name: string }[]) => list.map(({ id, name }) => `${id}_${name}`);
  expect(names(readPgMigrations())).toEqual(names(readMigrations()));
});

describeEachStore("the store's operations on $name", { maxAttempts: 3 }, ({ store, clock }) => {
  const accept = (items: IntakeItem<BillingEvent>[], seen?: IntakeView[]) => store.events.accept("billing", items, decide(seen), allOrNothing);
  const order = async (serviceId: string, ip: string) => {
    const r = await accept([item(`order-${serviceId}`, created(serviceId, ip))]);
    return r.items[0] as { result: Verdict; eventId: string; jobId: number };
  };

  describe("intake", () => {
    it("stores an order with its event and job, the job and row naming the event", async () => {
      const r = await order("s1", "203.0.113.1");
      expect(r.result).toBe("accepted");
      const svc = await store.services.get("s1");
      expect(svc).toMatchObject({ service_id: "s1", ip: "203.0.113.1", status: "pending", order_event_id: r.eventId, ip_changes: 0, companions: "[]" });
      expect(svc?.created_at).toBe(clock.now());
      expect(svc?.license_key).toMatch(/^lb_[0-9a-f]{24}$/);
      expect(await store.services.byLicenseKey(svc!.license_key)).toEqual(svc);
      expect(await store.jobs.get(r.jobId)).toMatchObject({ kind: "register", eventId: r.eventId, serviceId: "s1", queueKey: "svc:s1", state: "queued" });
      expect(await store.counts()).toEqual({ events: 1, services: 1, jobs: 1, history: 0, mails: 0 });
    });

    it("accepts a webhook id once: the same delivery again is a duplicate and writes nothing", async () => {
      const first = await order("s1", "203.0.113.1");
      const again = await accept([item("order-s1", created("s1", "203.0.113.1"))]);
      expect(again).toEqual({ stored: true, items: [{ duplicate: first.eventId, type: "service.created" }] });
      // The id is per source: another panel may use the same one.
      const other = await store.events.accept("hostbill", [item("order-s1", ipChanged("s1", "203.0.113.9"))], decide(), allOrNothing);
      expect(other.items[0]).toMatchObject({ result: "accepted" });
      expect(await store.counts()).toMatchObject({ events: 2, jobs: 2 });
    });

    it("shows decide the stored row, the queue's unfinished jobs and the IP's other holders", async () => {
      const s1 = await order("s1", "203.0.113.1");
      const seen: IntakeView[] = [];
      expect((await accept([item("order-s2", created("s2", "203.0.113.1"))], seen)).items[0]).toEqual({ result: "refused" });
      expect(seen[0]!.existing).toBeUndefined();
      expect(seen[0]!.unfinished).toEqual([]);
      expect(seen[0]!.holders.map((h) => h.service_id)).toEqual(["s1"]);

      await accept([item("ip-s1", ipChanged("s1", "198.51.100.7"))], seen);
      expect(seen[1]!.existing?.service_id).toBe("s1");
      expect(seen[1]!.unfinished.map((j) => j.id)).toEqual([s1.jobId]);
      // The target of a queued IP change is held too.
      await accept([item("order-s3", created("s3", "198.51.100.7"))], seen);
      expect(seen[2]!.holders.map((h) => h.service_id)).toEqual(["s1"]);
      expect((await store.services.get("s1"))?.ip_changes).toBe(1);
    });

    it("answers without writing when decide says so", async () => {
      const r = await accept([item("renew-nobody", ipChanged("ghost", "203.0.113.2"))]);
      expect(r).toEqual({ stored: true, items: [{ result: "unknown" }] });
      expect(await store.counts()).toEqual({ events: 0, services: 0, jobs: 0, history: 0, mails: 0 });
    });

    it("stores all of a delivery or nothing: one refused event rolls back the others", async () => {
      await order("s1", "203.0.113.1");
      const before = await store.counts();
      const r = await accept([item("d-1", created("s2", "203.0.113.2")), item("d-2", ipChanged("s1", "203.0.113.3")), item("d-3", created("s3", "203.0.113.1"))]);
      expect(r.stored).toBe(false);
      expect(r.items.map((i) => ("result" in i ? i.result : "duplicate"))).toEqual(["accepted", "accepted", "refused"]);
      expect(await store.counts()).toEqual(before);
      expect(await store.services.get("s2")).toBeUndefined();
      expect((await store.services.get("s1"))?.ip_changes).toBe(0);
      // Nothing of it was stored, so the same delivery is judged afresh, not a duplicate.
      const fixed = await accept([item("d-1", created("s2", "203.0.113.2")), item("d-2", ipChanged("s1", "203.0.113.3"))]);
      expect(fixed.stored).toBe(true);
      expect(fixed.items.every((i) => "result" in i && i.result === "accepted")).toBe(true);
    });

    it("reads a stored event back by its id, with its source and webhook id", async () => {
      const { eventId } = await order("s1", "203.0.113.1");
      expect(await store.events.get(eventId)).toEqual({
        id: eventId,
        source: "billing",
        webhook_id: "order-s1",
        type: "service.created",
        service_id: "s1",
        payload: JSON.stringify(created("s1", "203.0.113.1")),
        received_at: clock.now(),
        outcome: null,
        detail: null,
      });
      expect(await store.events.get("evt_nothing")).toBeUndefined();
    });

    // A terminated service ordered again: its row is written anew from the order (the intake's
    // re-activation), keeping its id, licence key and creation time.
    it("rewrites a service's row from a new order, naming the order's event", async () => {
      const first = await order("s1", "203.0.113.1");
      await store.services.change({ serviceId: "s1", patch: { status: "terminated", last_error: "gone upstream" } });
      const row = (await store.services.get("s1"))!;
      clock.advance(1_000);
      const { service_id: _id, ...columns } = newService("s1", "203.0.113.1");
      const reorder = (it: IntakeItem<BillingEvent>): IntakeDecision<Verdict> => ({
        write: true,
        result: "accepted",
        event: { type: it.event.type, serviceId: "s1", payload: JSON.stringify(it.event), outcome: null, detail: null },
        order: { update: { ...columns, billing_cycle: "annually", months: 12, customer_email: "new@example.com", last_error: null } },
        job: { kind: "register", serviceId: "s1", queueKey: serviceQueueKey("s1") },
      });
      const r = await store.events.accept("billing", [item("order-s1-again", created("s1", "203.0.113.1"))], reorder, allOrNothing);
      const eventId = (r.items[0] as { eventId: string }).eventId;
      expect(eventId).not.toBe(first.eventId);
      expect(await store.services.get("s1")).toMatchObject({
        ip: "203.0.113.1",
        billing_cycle: "annually",
        months: 12,
        customer_email: "new@example.com",
        status: "pending",
        last_error: null,
        order_event_id: eventId,
        license_key: row.license_key,
        created_at: row.created_at,
        updated_at: clock.now(),
      });
    });

    it("lets a later event of one delivery see what an earlier one wrote", async () => {
      const seen: IntakeView[] = [];
      await accept([item("d-1", created("s1", "203.0.113.1")), item("d-2", ipChanged("s1", "203.0.113.3"))], seen);
      expect(seen[1]!.existing?.service_id).toBe("s1");
      expect(seen[1]!.unfinished.map((j) => j.kind)).toEqual(["register"]);
    });
  });

  describe("services", () => {
    it("writes a change in one go: columns, history, the event's outcome and its jobs", async () => {
      const { eventId, jobId } = await order("s1", "203.0.113.1");
      clock.advance(1_000);
      const r = await store.services.change({
        serviceId: "s1",
        patch: { status: "active", expires_at: clock.now() + 30 * DAY, last_error: null },
        history: [{ action: "registered", detail: "licence 42", event_id: eventId, job_id: jobId }, { action: "variant set" }],
        event: { id: eventId, outcome: "applied", detail: "bought" },
        enqueue: [{ kind: "mail_install", serviceId: "s1", uniqueKey: `install:${eventId}` }],
      });
      expect(r.applied).toBe(true);
      expect(r.jobIds).toHaveLength(1);
      expect(await store.services.get("s1")).toMatchObject({ status: "active", expires_at: clock.now() + 30 * DAY, updated_at: clock.now() });
      expect(await store.jobs.get(r.jobIds[0]!)).toMatchObject({ kind: "mail_install", uniqueKey: `install:${eventId}` });
      const history = await store.services.history("s1");
      expect(history.map((h) => [h.action, h.detail])).toEqual([
        ["received service.created", "bought"],
        ["registered", "licence 42"],
        ["variant set", null],
      ]);
      expect(history[1]).toMatchObject({ service_id: "s1", at: clock.now(), event_id: eventId, job_id: jobId });
      // A unique key already used gives back the first job.
      const again = await store.services.change({ serviceId: "s1", enqueue: [{ kind: "mail_install", uniqueKey: `install:${eventId}` }] });
      expect(again.jobIds).toEqual(r.jobIds);
    });

    it("writes nothing when the row changed since it was read (ifUpdatedAt)", async () => {
      await order("s1", "203.0.113.1");
      const seen = (await store.services.get("s1"))!;
      clock.advance(1_000);
      await store.services.change({ serviceId: "s1", patch: { last_error: "someone else" } });
      const before = await store.counts();
      const stale = await store.services.change({
        serviceId: "s1",
        ifUpdatedAt: seen.updated_at,
        patch: { status: "suspended" },
        history: [{ action: "reconcile: suspended" }],
        enqueue: [{ kind: "enforce_suspension", serviceId: "s1", queueKey: "svc:s1" }],
      });
      expect(stale).toEqual({ applied: false, jobIds: [] });
      expect(await store.counts()).toEqual(before);
      expect((await store.services.get("s1"))?.status).toBe("pending");
      const fresh = await store.services.change({ serviceId: "s1", ifUpdatedAt: clock.now(), patch: { status: "suspended" } });
      expect(fresh.applied).toBe(true);
      expect((await store.services.get("s1"))?.status).toBe("suspended");
    });

    it("records a stopped job's service change with its ending, and nothing when the worker no longer holds the job", async () => {
      const { eventId } = await order("s1", "203.0.113.1");
      const [job] = await store.jobs.claim("w1", 1, 10_000);
      const seenStates: string[] = [];
      const stop: StopRecord = (state, svc) => {
        seenStates.push(`${state} ${svc.status}`);
        return { patch: { last_error: "no funds", status: "failed" }, history: [{ action: "register failed", detail: "no funds", job_id: job!.id }], event: { id: eventId, outcome: "failed", detail: "no funds" } };
      };
      // Its retries used up: the retry becomes failed, and the stop record applies.
      const exhausted = { ...job!, attempts: job!.maxAttempts };
      expect(await store.jobs.finish(exhausted, "w1", { state: "retry", error: "no funds", code: "insufficient_balance", delayMs: 1_000, stop })).toBe("failed");
      expect(seenStates).toEqual(["failed pending"]);
      expect(await store.services.get("s1")).toMatchObject({ status: "failed", last_error: "no funds" });
      expect((await store.services.history("s1")).map((h) => [h.action, h.detail])).toEqual([
        ["received service.created", "no funds"],
        ["register failed", "no funds"],
      ]);
      expect((await store.events.get(eventId))?.outcome).toBe("failed");

      // A worker whose lease was taken over records nothing, neither the ending nor the stop.
      const before = await store.counts();
      expect(await store.jobs.finish(job!, "w1", { state: "blocked", error: "late", code: "upstream_refused", stop })).toBeUndefined();
      expect(seenStates).toHaveLength(1);
      expect(await store.counts()).toEqual(before);
      // An ending that leaves the job queued (a retry with attempts left) records no stop either.
      await order("s2", "203.0.113.2");
      const [second] = await store.jobs.claim("w1", 1, 10_000);
      expect(await store.jobs.finish(second!, "w1", { state: "retry", error: "timeout", code: null, delayMs: 1_000, stop })).toBe("queued");
      expect(seenStates).toHaveLength(1);
      expect((await store.services.get("s2"))?.last_error).toBeNull();
    });

    it("commits a handler's last change with the job's success, and nothing of it when the worker no longer holds the job", async () => {
      const { eventId, jobId } = await order("s1", "203.0.113.1");
      const [job] = await store.jobs.claim("w1", 1, 10_000);
      const change = {
        serviceId: "s1",
        patch: { status: "active" as const, last_error: null },
        history: [{ action: "registered", detail: "licence 42", event_id: eventId, job_id: jobId }],
        event: { id: eventId, outcome: "applied" as const, detail: null },
        enqueue: [{ kind: "mail_install", serviceId: "s1", uniqueKey: `install:${eventId}` }],
      };
      // Its lease ran out and another worker took it: this worker's success writes nothing.
      clock.advance(10_001);
      const [taken] = await store.jobs.claim("w2", 1, 10_000);
      expect(taken?.id).toBe(job!.id);
      const before = await store.counts();
      expect(await store.jobs.finish(job!, "w1", { state: "succeeded", change })).toBeUndefined();
      expect(await store.counts()).toEqual(before);
      expect((await store.services.get("s1"))?.status).toBe("pending");
      // The holder's success writes the change with the ending.
      expect(await store.jobs.finish(taken!, "w2", { state: "succeeded", change })).toBe("succeeded");
      expect((await store.services.get("s1"))?.status).toBe("active");
      expect((await store.services.history("s1")).map((h) => h.action)).toContain("registered");
      expect((await store.events.get(eventId))?.outcome).toBe("applied");
      expect(await store.jobs.list({ kind: "mail_install" })).toHaveLength(1);
    });

    it("lists a service's received events and its history together, by time", async () => {
      await order("s1", "203.0.113.1");
      await store.services.change({ serviceId: "s1", history: [{ action: "registered" }] });
      clock.advance(1_000);
      await store.services.change({ serviceId: "s1", history: [{ action: "mail sent" }] });
      clock.advance(1_000);
      await accept([item("ip-1", ipChanged("s1", "203.0.113.8"))]);
      await store.services.change({ serviceId: "s1", history: [{ action: "ip changed" }] });
      const history = await store.services.history("s1");
      expect(history.map((h) => h.action)).toEqual(["received service.created", "registered", "mail sent", "received service.ip_changed", "ip changed"]);
      expect(history.map((h) => h.at)).toEqual([0, 0, 1, 2, 2].map((n) => Date.UTC(2026, 0, 1) + n * 1_000));
      expect(await store.services.history("nobody")).toEqual([]);
    });

    it("lists services by id in byte order, by status, up to a limit", async () => {
      for (const [id, n] of [["b", 1], ["B", 2], ["a10", 3], ["a9", 4]] as const) await order(id, `203.0.113.${n}`);
      await store.services.change({ serviceId: "a9", patch: { status: "active" } });
      expect((await store.services.list()).map((s) => s.service_id)).toEqual(["B", "a10", "a9", "b"]);
      expect((await store.services.list("pending", 2)).map((s) => s.service_id)).toEqual(["B", "a10"]);
      expect((await store.services.list("active")).map((s) => s.service_id)).toEqual(["a9"]);
    });

    // Each column as the handlers and reconcile's repairs write it (an IP the reseller moved, a term
    // it changed, a suspension found upstream, a product change), read back as written.
    it("patches the columns a handler or a repair changes, each alone or together, and reads them back as written", async () => {
      await order("s1", "203.0.113.1");
      const patches: ServicePatch[] = [
        { ip: "203.0.113.9" },
        { ip: "203.0.113.10", last_error: null },
        { expires_at: clock.now() + 40 * DAY },
        { status: "suspended", expires_at: clock.now() + 41 * DAY },
        { product_id: "13", variant: "litespeed4", upstream_variant: "litespeed8", last_error: null },
        { paid_until: clock.now() + 365 * DAY, billing_cycle: "annually", months: 12, ip_changes: 2, companions: '["cloudlinux"]' },
        { customer_email: "new@example.com", customer_name: "Ann Other", last_error: "upstream said no" },
      ];
      for (const patch of patches) {
        clock.advance(1_000);
        expect((await store.services.change({ serviceId: "s1", patch })).applied).toBe(true);
        expect(await store.services.get("s1"), JSON.stringify(patch)).toMatchObject({ ...patch, updated_at: clock.now() });
      }
    });

    it("notes the module a service's calls come from (its licence unchanged), and counts the services of each module", async () => {
      await order("s1", "203.0.113.1");
      await order("s2", "203.0.113.2");
      await order("s3", "203.0.113.3");
      const updatedAt = (await store.services.get("s1"))!.updated_at;
      clock.advance(1_000);
      await store.services.noteModule("s1", "whmcs/1.4.0");
      await store.services.noteModule("s2", "whmcs/1.4.0");
      await store.services.noteModule("s1", "whmcs/1.4.0");
      await store.services.noteModule("s3", "blesta/1.3.0");
      expect(await store.services.get("s1")).toMatchObject({ module: "whmcs/1.4.0", updated_at: updatedAt });
      expect(await store.services.modules()).toEqual([
        { module: "blesta/1.3.0", services: 1 },
        { module: "whmcs/1.4.0", services: 2 },
      ]);
      await store.services.noteModule("s2", "whmcs/1.5.0");
      expect(await store.services.modules()).toEqual([
        { module: "blesta/1.3.0", services: 1 },
        { module: "whmcs/1.4.0", services: 1 },
        { module: "whmcs/1.5.0", services: 1 },
      ]);
    });

    it("names the services with lifecycle jobs of the given kinds queued or running", async () => {
      await order("s1", "203.0.113.1");
      await order("s2", "203.0.113.2");
      await store.jobs.enqueue({ kind: "mail_install", serviceId: "s3" });
      expect(await store.services.busy(["register"])).toEqual(new Set(["s1", "s2"]));
      expect(await store.services.busy([])).toEqual(new Set());
      const [job] = await store.jobs.claim("w1", 1, 10_000);
      await store.jobs.finish(job!, "w1", { state: "succeeded" });
      expect(await store.services.busy(["register", "change_ip"])).toEqual(new Set(["s2"]));
    });
  });

  describe("alerts", () => {
    it("opens an episode once, with one mail, counts repeats, and opens a new one after it is resolved", async () => {
      const mail = (openedAt: number) => ({ kind: "mail_alert", uniqueKey: `alert:upstream:${openedAt}` });
      expect(await store.alerts.raise("upstream", "Upstream down", "timeouts", mail)).toBe(true);
      clock.advance(1_000);
      expect(await store.alerts.raise("upstream", "Upstream down", "timeouts", mail)).toBe(false);
      expect(await store.alerts.open()).toEqual([{ key: "upstream", subject: "Upstream down", opened_at: Date.UTC(2026, 0, 1), count: 2 }]);
      expect(await store.jobs.list({ kind: "mail_alert" })).toHaveLength(1);
      expect(await store.alerts.resolve(["upstream", "never-opened"])).toEqual(["upstream"]);
      expect(await store.alerts.resolve(["upstream"])).toEqual([]);
      expect(await store.alerts.open()).toEqual([]);
      clock.advance(1_000);
      expect(await store.alerts.raise("upstream", "Upstream down again", "refused", mail)).toBe(true);
      expect(await store.alerts.open()).toEqual([{ key: "upstream", subject: "Upstream down again", opened_at: clock.now(), count: 1 }]);
      expect(await store.jobs.list({ kind: "mail_alert" })).toHaveLength(2);
    });
  });

  describe("mails", () => {
    const row = (jobId: number) => ({
      mail_key: "install:evt_1",
      kind: "install",
      event_id: "evt_1",
      job_id: jobId,
      service_id: "s1",
      to_address: "c@example.com",
      subject: "Your licence",
      message_id: "<install.evt_1@bridge>",
    });

    it("records a mail before sending, counts attempts, and never reopens a sent one", async () => {
      const { jobId } = await order("s1", "203.0.113.1");
      await store.mails.begin(row(jobId));
      expect(await store.mails.get("install:evt_1")).toMatchObject({ state: "sending", attempts: 1, job_id: jobId, created_at: clock.now(), sent_at: null });
      await store.mails.failed("install:evt_1", "421 try later");
      expect((await store.mails.get("install:evt_1"))?.last_error).toBe("421 try later");
      await store.mails.begin({ ...row(jobId), subject: "Your licence (2)", message_id: "<other@bridge>" });
      expect(await store.mails.get("install:evt_1")).toMatchObject({ attempts: 2, last_error: null, subject: "Your licence (2)", message_id: "<install.evt_1@bridge>" });
      clock.advance(1_000);
      await store.services.change({ serviceId: "s1", history: [{ action: "install mail sent", detail: "to c@example.com", job_id: jobId }], mailSent: "install:evt_1" });
      const sent = await store.mails.get("install:evt_1");
      expect(sent).toMatchObject({ state: "sent", sent_at: clock.now(), attempts: 2 });
      await store.mails.begin(row(jobId));
      await store.mails.failed("install:evt_1", "late");
      expect(await store.mails.get("install:evt_1")).toEqual(sent);
      expect((await store.services.history("s1")).at(-1)).toMatchObject({ action: "install mail sent", job_id: jobId, at: clock.now() });
      expect(await store.mails.get("nothing")).toBeUndefined();
      expect((await store.counts()).mails).toBe(1);
    });
  });

  describe("renewals", () => {
    const now = Date.UTC(2026, 0, 1);
    const license = async (id: string, n: number, patch: { status?: "active" | "suspended"; expires_at: number; paid_until: number | null }) => {
      await order(id, `203.0.113.${n}`);
      await store.services.change({ serviceId: id, patch: { status: "active", ...patch } });
    };
    const job = (due: { service_id: string; expires_at: number }) => ({
      kind: "renew",
      serviceId: due.service_id,
      queueKey: serviceQueueKey(due.service_id),
      uniqueKey: `renew:${due.service_id}:${due.expires_at}`,
      payload: { term_end: due.expires_at },
    });
    // The sweep's rule decides what the store hands it (src/renewals/sweep.ts asks the same).
    const renewal = (c: RenewalCandidate, at: number) => (renewalDue(c, { now: at, leadMs: 7 * DAY }).due ? job(c) : undefined);

    beforeEach(async () => {
      await license("due", 1, { expires_at: now + 2 * DAY, paid_until: now + 30 * DAY });
      await license("due-later", 2, { expires_at: now + 6 * DAY, paid_until: now + 40 * DAY });
      await license("far", 3, { expires_at: now + 20 * DAY, paid_until: now + 50 * DAY });
      await license("unpaid", 4, { expires_at: now + 2 * DAY, paid_until: now + 2 * DAY });
      await license("suspended", 5, { status: "suspended", expires_at: now + 2 * DAY, paid_until: now + 30 * DAY });
    });

    it("enqueues each due term once, however often it sweeps", async () => {
      const first = await store.renewals.sweep(7 * DAY, renewal);
      expect(first.map((r) => [r.due.service_id, r.created]).sort()).toEqual([
        ["due", true],
        ["due-later", true],
      ]);
      const second = await store.renewals.sweep(7 * DAY, renewal);
      expect(second.map((r) => [r.due.service_id, r.id, r.created]).sort()).toEqual(first.map((r) => [r.due.service_id, r.id, false]).sort());
      expect(await store.jobs.list({ kind: "renew" })).toHaveLength(2);
      const job = await store.jobs.get(first.find((r) => r.due.service_id === "due")!.id);
      expect(job).toMatchObject({ serviceId: "due", queueKey: "svc:due", payload: { term_end: now + 2 * DAY } });
    });

    it("hands the rule every active licence whose term ends within the lead, at the store's now, and queues only what it returns", async () => {
      const seen: [RenewalCandidate, number][] = [];
      const swept = await store.renewals.sweep(7 * DAY, (c, at) => {
        seen.push([c, at]);
        return c.service_id === "unpaid" ? job(c) : undefined;
      });
      expect(seen.map(([c]) => c.service_id).sort()).toEqual(["due", "due-later", "unpaid"]);
      expect(seen.find(([c]) => c.service_id === "unpaid")).toEqual([{ service_id: "unpaid", expires_at: now + 2 * DAY, status: "active", paid_until: now + 2 * DAY }, now]);
      expect(swept.map((r) => [r.due, r.created])).toEqual([[{ service_id: "unpaid", expires_at: now + 2 * DAY }, true]]);
      expect((await store.jobs.list({ kind: "renew" })).map((j) => j.serviceId)).toEqual(["unpaid"]);
    });

    it("reads the forecast's candidates, earliest first, unpaid ones among them, each with its provider", async () => {
      await store.services.change({ serviceId: "due-later", patch: { provider: "manage2", sku: "12345" } });
      expect((await store.renewals.upcoming(now + 7 * DAY)).map((c) => [c.service_id, c.provider, c.expires_at, c.paid_until, c.status, c.months])).toEqual([
        ["due", "reseller", now + 2 * DAY, now + 30 * DAY, "active", 1],
        ["unpaid", "reseller", now + 2 * DAY, now + 2 * DAY, "active", 1],
        ["due-later", "manage2", now + 6 * DAY, now + 40 * DAY, "active", 1],
      ]);
    });

    it("sweeps one service when asked", async () => {
      expect((await store.renewals.sweep(7 * DAY, renewal, "due-later")).map((r) => r.due)).toEqual([{ service_id: "due-later", expires_at: now + 6 * DAY }]);
      expect(await store.renewals.sweep(7 * DAY, renewal, "far")).toEqual([]);
      expect(await store.jobs.list({ kind: "renew" })).toHaveLength(1);
    });

    it("finds licences ending soon whose renewal was tried and has not succeeded", async () => {
      const swept = await store.renewals.sweep(7 * DAY, renewal);
      const keyOf = (due: { service_id: string; expires_at: number }) => `renew:${due.service_id}:${due.expires_at}`;
      // Not tried yet: not at risk.
      expect(await store.renewals.atRisk(7 * DAY, keyOf)).toEqual([]);
      // Clear the way for the renewals: the registrations ahead of them in each queue are done.
      for (const j of await store.jobs.claim("w1", 10, 10_000)) await store.jobs.finish(j, "w1", { state: "succeeded" });
      for (const j of await store.jobs.claim("w1", 10, 10_000)) {
        if (j.serviceId === "due") await store.jobs.finish(j, "w1", { state: "blocked", error: "no funds", code: "upstream_refused" });
        else await store.jobs.finish(j, "w1", { state: "succeeded" });
      }
      const dueJob = swept.find((r) => r.due.service_id === "due")!.id;
      expect(await store.renewals.atRisk(7 * DAY, keyOf)).toEqual([
        { service_id: "due", ip: "203.0.113.1", expires_at: now + 2 * DAY, job_id: dueJob, state: "blocked", last_error: "no funds" },
      ]);
      // Only within the window asked for.
      expect(await store.renewals.atRisk(DAY, keyOf)).toEqual([]);
      // Nor for a candidate whose key the caller leaves out (a term its rule finds not due).
      expect(await store.renewals.atRisk(7 * DAY, (c) => (c.service_id === "due" ? undefined : keyOf(c)))).toEqual([]);
    });
  });

  it("records an ending whose error text holds a NUL character (PostgreSQL stores it as U+FFFD)", async () => {
    const { id } = await store.jobs.enqueue({ kind: "register" });
    const [job] = await store.jobs.claim("w1", 1, 10_000);
    expect(await store.jobs.finish(job!, "w1", { state: "blocked", error: "upstream said \u0000 nothing", code: "upstream_refused" })).toBe("blocked");
    expect((await store.jobs.get(id))?.lastError?.replace("\uFFFD", "\u0000")).toBe("upstream said \u0000 nothing");
  });

  it("knows its migrations, takes a write, and counts its rows", async () => {
    const latest = readMigrations().at(-1)!.id;
    expect(await store.migrationStatus()).toEqual({ databaseVersion: latest, codeVersion: latest, pending: [] });
    expect(await store.migrate()).toEqual([]);
    expect(await store.health.writable()).toBeUndefined();
    expect(store.isBusy(new Error("boom"))).toBe(false);
    expect(store.lost()).toBeUndefined();
    expect(await store.counts()).toEqual({ events: 0, services: 0, jobs: 0, history: 0, mails: 0 });
  });
});
