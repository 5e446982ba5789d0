import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { PRUNED_PAYLOAD } from "../../src/store/store.js";
import { createdEvent, uniqueId } from "../helpers/bridge.js";
import { untilIdle, usePairInTest, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { purchases } from "../reconcile/helpers.js";

const DAY = 86_400_000;

/** RETENTION_DAYS on a running bridge (both stores): an order's finished work goes, what a promise rests on stays. */
describe("retention on a running bridge", () => {
  const startPair = usePairInTest();

  it("prunes an old order's succeeded jobs, its event's payload, its sent mail and outbox file; keeps its history, and its webhook id stays a duplicate", async () => {
    const clock = manualClock(Date.now());
    const { sb, bridge } = await startPair({ clock, env: { RETENTION_DAYS: "30" } });
    const outbox = join(bridge.config.dataDir, "outbox");
    const event = createdEvent();
    const webhookId = uniqueId("wh");
    const first = await bridge.send(event, { id: webhookId, nowMs: clock.now() });
    expect(first.status).toBe(202);
    await waitStatus(bridge, event.service.id, "active");
    await waitFor(async () => (await bridge.service.queue.list({ kind: "mail_install", state: "succeeded" })).length === 1, 10_000, "the install mail");
    await untilIdle(bridge);
    expect(readdirSync(outbox).filter((f) => f.endsWith(".eml"))).toHaveLength(1);
    const history = await bridge.service.services.history(event.service.id);
    const counts = await bridge.service.store.counts();
    expect(counts).toMatchObject({ events: 1, jobs: 2, mails: 1 });
    const bought = purchases(sb);

    // 29 days on: nothing is old enough.
    clock.advance(29 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ retention_days: 30, jobs: 0, event_payloads: 0, mails: 0, outbox_files: 0 });

    clock.advance(2 * DAY);
    expect(await bridge.service.prune({ dryRun: true })).toMatchObject({ dry_run: true, jobs: 2, event_payloads: 1, mails: 1, outbox_files: 1 });
    expect(await bridge.service.store.counts()).toEqual(counts);

    expect(await bridge.service.prune()).toMatchObject({ dry_run: false, jobs: 2, event_payloads: 1, mails: 1, outbox_files: 1 });
    expect(await bridge.service.store.counts()).toEqual({ ...counts, jobs: 0, mails: 0 });
    expect(readdirSync(outbox).filter((f) => f.endsWith(".eml"))).toEqual([]);
    expect((await bridge.service.store.events.get(first.body.event_id as string))?.payload).toBe(PRUNED_PAYLOAD);
    // The licence and its history are as they were.
    expect(await bridge.service.services.history(event.service.id)).toEqual(history);
    expect(await bridge.service.services.get(event.service.id)).toMatchObject({ status: "active" });

    // A replay of the delivery (signed now, inside the timestamp window) is still a duplicate, and buys nothing.
    const replay = await bridge.send(event, { id: webhookId, nowMs: clock.now() });
    expect(replay).toMatchObject({ status: 200, body: { status: "duplicate", event_id: first.body.event_id } });
    expect(purchases(sb)).toEqual(bought);

    expect(await bridge.service.prune()).toMatchObject({ jobs: 0, event_payloads: 0, mails: 0, outbox_files: 0 });
    expect(existsSync(outbox)).toBe(true);
  });

  it("never prunes an unfinished order: its blocked job, the event it carries and the job's intent stay", async () => {
    const clock = manualClock(Date.now());
    const { bridge } = await startPair({ clock, sandbox: { balance: 0 } });
    const event = createdEvent();
    const sent = await bridge.send(event, { nowMs: clock.now() });
    expect(sent.status).toBe(202);
    const [blocked] = await waitFor(async () => {
      const jobs = await bridge.service.queue.list({ state: "blocked" });
      return jobs.length === 1 && jobs;
    }, 10_000, "the order to be blocked on the balance");

    clock.advance(365 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ jobs: 0, event_payloads: 0, mails: 0 });
    expect(await bridge.service.queue.get(blocked!.id)).toMatchObject({ state: "blocked", intent: blocked!.intent });
    expect((await bridge.service.store.events.get(sent.body.event_id as string))?.payload).toContain(event.service.id);
  });

  it("keeps the operators' audit trail a year by default (AUDIT_RETENTION_DAYS), then the daily prune deletes what is older and says how many", async () => {
    const clock = manualClock(Date.now());
    const { bridge } = await startPair({ clock });
    await bridge.service.store.audit.record({ actor: "alice", action: "service.suspend", service_id: "svc-audited", outcome: "refused", detail: "a viewer may not" });

    clock.advance(364 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ audit_retention_days: 365, audit_entries: 0 });
    clock.advance(2 * DAY);
    expect(await bridge.service.prune({ dryRun: true })).toMatchObject({ dry_run: true, audit_entries: 1 });
    expect((await bridge.admin("/admin/audit")).body).toMatchObject({ total: 1 });
    expect(await bridge.service.prune()).toMatchObject({ dry_run: false, audit_retention_days: 365, audit_entries: 1 });
    expect((await bridge.admin("/admin/audit")).body).toMatchObject({ audit: [], total: 0 });
  });
});
