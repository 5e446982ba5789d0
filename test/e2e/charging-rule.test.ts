import { describe, expect, it } from "vitest";
import { healBlockedRenewals } from "../../src/renewals/healing.js";
import { createdEvent, serviceEvent } from "../helpers/bridge.js";
import { orderActive, untilIdle, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/**
 * The charging rule (issue 21): a charge is the last step of a decision that still holds. A
 * renewal that waited (blocked on the reseller's balance) while the panel terminated or
 * suspended the service buys nothing once the balance is back, whichever way it is re-run.
 */

type Bridge = Pair["bridge"];

/** The renewal job of `serviceId`, once it is blocked. */
function blockedRenewal(bridge: Bridge, serviceId: string) {
  return waitFor(async () => {
    const jobs = (await bridge.admin(`/admin/jobs?state=blocked&service_id=${serviceId}`)).body.jobs as { id: number; kind: string }[];
    return jobs.find((j) => j.kind === "renew") ?? false;
  });
}

/** An active service whose renewal is due at once (lead 40 days, monthly) and paid, blocked on a zero balance. */
async function renewalBlockedOnBalance({ sb, bridge }: Pair): Promise<{ id: string; renewal: { id: number } }> {
  const id = await orderActive(bridge);
  sb.sandbox.setBalance(0);
  // A dateless renewal: one more cycle paid, so the sweep renews at once (its term ends within the lead).
  expect((await bridge.send(serviceEvent("service.renewed", id))).status).toBe(202);
  return { id, renewal: await blockedRenewal(bridge, id) };
}

const renewCharges = (sb: Pair["sb"]) => sb.sandbox.ledger().filter((c) => c.op === "renew");

const reruns = {
  "the operator's jobs retry": (bridge: Bridge, jobId: number) => bridge.admin(`/admin/jobs/${jobId}/retry`, { method: "POST" }).then((r) => expect(r.status).toBe(202)),
  // What the service's own timer runs every BLOCKED_RETRY_MINUTES (here with no minimum age).
  "the automatic retry of blocked renewals": (bridge: Bridge) => healBlockedRenewals(bridge.service.store, 0).then((n) => expect(n).toBeGreaterThan(0)),
} as const;

describe("charging rule: a blocked renewal and a termination or suspension accepted behind it", () => {
  const pair = usePair({ env: { RENEWAL_LEAD_DAYS: "40" } });

  for (const [how, rerun] of Object.entries(reruns)) {
    for (const [eventType, endStatus] of [
      ["service.terminated", "terminated"],
      ["service.suspended", "suspended"],
    ] as const) {
      it(`${eventType} behind a blocked renewal: after a top-up and ${how}, no renewal is charged`, async () => {
        const p = pair();
        const { sb, bridge } = p;
        const { id, renewal } = await renewalBlockedOnBalance(p);
        expect((await bridge.send(serviceEvent(eventType, id))).status).toBe(202);
        sb.sandbox.setBalance(1000);
        await rerun(bridge, renewal.id);
        await waitStatus(bridge, id, endStatus);
        await untilIdle(bridge);

        expect(renewCharges(sb)).toEqual([]);
        const jobs = (await bridge.admin(`/admin/jobs?service_id=${id}`)).body.jobs as { id: number }[];
        const job = jobs.find((j) => j.id === renewal.id);
        expect(job).toMatchObject({ state: "succeeded", skipped: expect.stringMatching(/being (terminated|suspended)/) });
        const history = (await bridge.admin(`/admin/services/${id}`)).body.history as { action: string; detail: string }[];
        expect(history).toContainEqual(expect.objectContaining({ action: "renewal skipped", detail: expect.stringMatching(/being (terminated|suspended).*nothing bought/) }));
      });
    }
  }

  it("a suspension undone by an unsuspension queued behind the renewal lets it buy its term once", async () => {
    const p = pair();
    const { sb, bridge } = p;
    const { id, renewal } = await renewalBlockedOnBalance(p);
    expect((await bridge.send(serviceEvent("service.suspended", id))).status).toBe(202);
    expect((await bridge.send(serviceEvent("service.unsuspended", id))).status).toBe(202);
    sb.sandbox.setBalance(1000);
    await reruns["the operator's jobs retry"](bridge, renewal.id);
    await waitFor(async () => renewCharges(sb).length === 1, 10_000, "the renewal's charge");
    await untilIdle(bridge);
    expect(renewCharges(sb)).toHaveLength(1);
    expect((await bridge.admin(`/admin/services/${id}`)).body.status).toBe("active");
  });

  it("a renewal skipped while the service was suspended gives its term back: unsuspended, the sweep renews that term once", async () => {
    const p = pair();
    const { sb, bridge } = p;
    const { id, renewal } = await renewalBlockedOnBalance(p);
    expect((await bridge.send(serviceEvent("service.suspended", id))).status).toBe(202);
    sb.sandbox.setBalance(1000);
    await reruns["the operator's jobs retry"](bridge, renewal.id);
    await waitStatus(bridge, id, "suspended");
    await untilIdle(bridge);
    expect(renewCharges(sb)).toEqual([]);

    expect((await bridge.send(serviceEvent("service.unsuspended", id))).status).toBe(202);
    await waitStatus(bridge, id, "active");
    await untilIdle(bridge);
    const swept = await bridge.service.sweep.sweep();
    expect(swept.queued.map((q) => q.service_id)).toEqual([id]);
    await waitFor(async () => renewCharges(sb).length === 1, 10_000, "the renewal's charge");
    await untilIdle(bridge);
    expect(renewCharges(sb)).toHaveLength(1);
  });
});

describe("charging rule: every charging call passes it", () => {
  const pair = usePair();

  it("a bundle's purchase, blocked on the balance and re-run after its termination was accepted, buys nothing", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setBalance(0);
    const order = createdEvent({ product_id: "20" });
    expect((await bridge.send(order)).status).toBe(202);
    const blocked = await waitFor(async () => {
      const jobs = (await bridge.admin(`/admin/jobs?state=blocked&service_id=${order.service.id}`)).body.jobs as { id: number; kind: string }[];
      return jobs.find((j) => j.kind === "register") ?? false;
    });
    expect((await bridge.send(serviceEvent("service.terminated", order.service.id))).status).toBe(202);
    sb.sandbox.setBalance(1000);
    await reruns["the operator's jobs retry"](bridge, blocked.id);
    await waitStatus(bridge, order.service.id, "terminated");
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toEqual([]);
    const history = (await bridge.admin(`/admin/services/${order.service.id}`)).body.history as { action: string; detail: string }[];
    expect(history).toContainEqual(expect.objectContaining({ action: "registration skipped", detail: expect.stringMatching(/being terminated/) }));
  });
});

