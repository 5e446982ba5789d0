import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { ALL_ADAPTERS, BLESTA_TOKEN, blestaHeaders, freshIp, hostbillHeaders, numericId, upmindHeaders } from "../adapters/helpers.js";
import { createdEvent, serviceEvent, uniqueId, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { postTo, untilIdle, upstreamCalls, usePairInTest, waitStatus } from "../helpers/e2e-harness.js";

const DAY = 86_400_000;

/**
 * TERMINATED_RETENTION_DAYS deletes a terminated service's events, but not the keys the intake
 * dedupes on: a delivery the bridge once accepted, sent again after the prune through any way in
 * (the billing webhook, each panel adapter), is a duplicate as it was before, and buys nothing.
 * Both stores.
 */
describe("a delivery sent again after its terminated service's records were pruned", () => {
  const startPair = usePairInTest();

  type Answer = { status: number; body: Record<string, unknown> };

  /** A bridge with every panel route and terminated records kept 60 days, on a clock the test moves. */
  async function start() {
    const clock = manualClock(Date.now());
    const { sb, bridge } = await startPair({ clock, env: { ...ALL_ADAPTERS, RETENTION_DAYS: "30", TERMINATED_RETENTION_DAYS: "60" } });
    const post = (path: string, raw: string, headers: Record<string, string>) => postTo(bridge.url, path, headers, raw);
    return { sb, bridge, clock, post };
  }

  async function settled(bridge: TestBridge, serviceId: string, status: "active" | "terminated") {
    await waitStatus(bridge, serviceId, status);
    await untilIdle(bridge);
  }

  /** 61 days on: the prune (its dry run first) empties the service of its records, its row kept. */
  async function pruneRecordsOf(bridge: TestBridge, clock: ReturnType<typeof manualClock>, serviceId: string) {
    clock.advance(61 * DAY);
    expect(await bridge.service.prune({ dryRun: true })).toMatchObject({ dry_run: true, terminated_services: 1 });
    expect(await bridge.service.prune()).toMatchObject({ dry_run: false, terminated_services: 1 });
    expect(await bridge.service.services.history(serviceId)).toEqual([]);
    expect(await bridge.service.prune({ dryRun: true })).toMatchObject({ terminated_services: 0 });
  }

  /** What the reseller has done: charges in its ledger, and every call that buys or revives a licence. */
  const upstream = (sb: TestSandbox) => ({ ledger: sb.sandbox.ledger().length, calls: upstreamCalls(sb, "register", "bundle-register", "renew", "unsuspend").length });

  /** Nothing came of the deliveries sent again: no charge or call upstream, no record, the service still terminated. */
  async function nothingCameOf(bridge: TestBridge, sb: TestSandbox, serviceId: string, before: ReturnType<typeof upstream>) {
    await untilIdle(bridge);
    expect(upstream(sb)).toEqual(before);
    expect(await bridge.service.services.get(serviceId)).toMatchObject({ status: "terminated" });
    expect(await bridge.service.services.history(serviceId)).toEqual([]);
    expect(await bridge.service.queue.list({ serviceId })).toEqual([]);
  }

  const duplicateOf = (first: Answer) => ({ status: 200, body: { event_id: first.body.event_id, status: "duplicate" } });

  it("through /webhooks/billing: the order and the termination are duplicates (200), nothing is bought again", async () => {
    const { sb, bridge, clock } = await start();
    const order = createdEvent();
    const id = order.service.id;
    const orderId = uniqueId("wh");
    const endId = uniqueId("wh");
    const created = await bridge.send(order, { id: orderId, nowMs: clock.now() });
    expect(created.status).toBe(202);
    await settled(bridge, id, "active");
    const terminated = await bridge.send(serviceEvent("service.terminated", id), { id: endId, nowMs: clock.now() });
    expect(terminated.status).toBe(202);
    await settled(bridge, id, "terminated");
    await pruneRecordsOf(bridge, clock, id);
    const before = upstream(sb);

    // The panel redelivers, signed anew (inside the timestamp window) under the same webhook-ids.
    expect(await bridge.send(order, { id: orderId, nowMs: clock.now() })).toEqual(duplicateOf(created));
    expect(await bridge.send(serviceEvent("service.terminated", id), { id: endId, nowMs: clock.now() })).toEqual(duplicateOf(terminated));
    await nothingCameOf(bridge, sb, id, before);
  });

  it("through /webhooks/hostbill: the same delivery is a duplicate, and a copy naming another HB-Event is still refused (409)", async () => {
    const { sb, bridge, clock, post } = await start();
    const id = numericId();
    const account = { id, client_id: "77", product_id: "12", billingcycle: "Monthly", domain: "server1.example.com", ip: freshIp(), status: "Active", next_due: "2026-03-01" };
    const createBody = JSON.stringify({ service: account, account_id: Number(id), server: { id: 1, name: "licences" }, delivery_id: uniqueId("hb") });
    const endBody = JSON.stringify({ account_id: Number(id), delivery_id: uniqueId("hb") });
    const hook = (event: string, raw: string) => post("/webhooks/hostbill", raw, { ...hostbillHeaders(raw, { nowMs: clock.now() }), "HB-Event": event });
    const created = await hook("after_accountcreate", createBody);
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    await settled(bridge, id, "active");
    const terminated = await hook("after_accountterminate", endBody);
    expect(terminated.status, JSON.stringify(terminated.body)).toBe(202);
    await settled(bridge, id, "terminated");
    await pruneRecordsOf(bridge, clock, id);
    const before = upstream(sb);

    expect(await hook("after_accountcreate", createBody)).toMatchObject(duplicateOf(created));
    expect(await hook("after_accountterminate", endBody)).toEqual(duplicateOf(terminated));
    // HB-Event is not signed: the pruned key still knows the order was accepted as service.created.
    const swapped = await hook("after_accountunsuspend", createBody);
    expect(swapped.status).toBe(409);
    expect(swapped.body).toMatchObject({ code: "conflict", errors: { "HB-Event": [expect.stringContaining("service.created")] } });
    await nothingCameOf(bridge, sb, id, before);
  });

  it("through /webhooks/upmind: the same webhook_event_id is a duplicate, nothing is bought again", async () => {
    const { sb, bridge, clock, post } = await start();
    const object = { id: `cp-${numericId()}`, product_id: "12", billing_cycle_months: 1, ip: freshIp(), next_due_date: "2026-03-01 00:00:00", client: { email: "bob@example.com", full_name: "Bob Example" } };
    const hook = (code: string) =>
      JSON.stringify({
        webhook_event_id: randomUUID(),
        event_datetime: "2026-01-15 10:00:00",
        version: "V1",
        hook_category: "contract",
        hook_code: `${code}_hook`,
        hook_log_id: randomUUID(),
        object_type: "contract_product",
        object_id: object.id,
        object,
      });
    const send = (raw: string) => post("/webhooks/upmind", raw, upmindHeaders(raw));
    const createBody = hook("contract_product_activated");
    const endBody = hook("contract_product_terminated");
    const created = await send(createBody);
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    await settled(bridge, object.id, "active");
    const terminated = await send(endBody);
    expect(terminated.status, JSON.stringify(terminated.body)).toBe(202);
    await settled(bridge, object.id, "terminated");
    await pruneRecordsOf(bridge, clock, object.id);
    const before = upstream(sb);

    // Upmind signs no time: a delivery months old is as valid as it was, and only its key stops it.
    expect(await send(createBody)).toEqual(duplicateOf(created));
    expect(await send(endBody)).toEqual(duplicateOf(terminated));
    await nothingCameOf(bridge, sb, object.id, before);
  });

  it("through /webhooks/blesta/<token>: a manual resend of the activation and the cancellation is a duplicate, nothing is bought again", async () => {
    const { sb, bridge, clock, post } = await start();
    const id = Number(numericId());
    const ip = freshIp();
    const old = {
      id,
      client_id: 3,
      pricing_id: 120,
      status: "pending",
      date_renews: null,
      package: { id: 12, name: "Package 12" },
      package_pricing: { id: 120, package_id: 12, term: 1, period: "month" },
      fields: [{ key: "license_ip", value: ip, serialized: 0, encrypted: 0 }],
    };
    const activation = JSON.stringify({ service_id: id, service_activated: true, vars: { license_ip: ip, status: "active", pricing_id: 120, client_id: 3, qty: 1, use_module: "true" }, old_service: old });
    const cancellation = JSON.stringify({ service_id: id, vars: { date_canceled: "2026-02-05 10:00:00", status: "canceled", use_module: "true" }, old_service: { ...old, status: "active" } });
    const send = (event: string, raw: string) => post(`/webhooks/blesta/${BLESTA_TOKEN}`, raw, blestaHeaders(event));
    const created = await send("Services.editAfter", activation);
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    await settled(bridge, String(id), "active");
    const terminated = await send("Services.cancelAfter", cancellation);
    expect(terminated.status, JSON.stringify(terminated.body)).toBe(202);
    await settled(bridge, String(id), "terminated");
    await pruneRecordsOf(bridge, clock, String(id));
    const before = upstream(sb);

    expect(await send("Services.editAfter", activation)).toMatchObject(duplicateOf(created));
    expect(await send("Services.cancelAfter", cancellation)).toEqual(duplicateOf(terminated));
    await nothingCameOf(bridge, sb, String(id), before);
  });
});
