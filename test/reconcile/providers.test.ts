import { describe, expect, it } from "vitest";
import { JOB_KINDS, serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import { createdEvent, serviceEvent, type TestBridge } from "../helpers/bridge.js";
import { untilIdle, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { CLN_CLOUDLINUX, MANAGE2_ADMIN, orderActiveOf, useProviderBridges } from "../helpers/providers.js";
import { behindTheBridge, clnBehindTheBridge, manage2BehindTheBridge } from "./helpers.js";

/**
 * Reconcile against each provider's own licence list (service-contract.md section 12): the
 * reseller's, Manage2's (XMLlicenseInfo, active and expired) and CLN's (`list`), each service
 * compared with its own provider's, keyed by (provider, IP, what is bought). Changes are made
 * behind the bridge's back through each provider's real API; the sandboxes' ledgers show that
 * the bridge bought nothing.
 */

interface Drift {
  kind: string;
  provider: string;
  service_id: string | null;
  ip: string;
  type: string;
  expected: string;
  actual: string;
  fixable: boolean;
  fix?: string;
}
interface Result {
  drift: Drift[];
  fixed: Drift[];
  manual: Drift[];
}

async function reconcile(bridge: TestBridge, fix = false): Promise<Result> {
  const res = await bridge.admin("/admin/reconcile", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ fix }) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as unknown as Result;
}

async function suspend(bridge: TestBridge, id: string): Promise<void> {
  await bridge.send(serviceEvent("service.suspended", id));
  await waitStatus(bridge, id, "suspended");
  await untilIdle(bridge);
}

describe("reconcile with the reseller, Manage2 and CLN", () => {
  const start = useProviderBridges();

  it("finds no drift when each provider's list agrees with the bridge, suspended licences included (Manage2 expired, CLN removed)", async () => {
    const { bridge } = await start();
    await orderActiveOf(bridge, "12", "203.0.113.180");
    await orderActiveOf(bridge, "40", "203.0.113.181");
    await orderActiveOf(bridge, "41", "203.0.113.182");
    await suspend(bridge, await orderActiveOf(bridge, "40", "203.0.113.183"));
    await suspend(bridge, await orderActiveOf(bridge, "41", "203.0.113.184"));

    expect(await reconcile(bridge)).toEqual({ drift: [], fixed: [], manual: [] });
  });

  it("a Manage2 licence expired behind the bridge's back is drift naming Manage2, left to a person: a reactivation may bill", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", "203.0.113.185");
    await manage2BehindTheBridge(sbs).licenseExpire({ liscid: sbs.manage2.licenses()[0]!.licenseid, reason: "behind the bridge's back" });

    const { drift, fixed, manual } = await reconcile(bridge, true);

    expect(drift).toEqual([
      { kind: "status_differs", provider: "manage2", service_id: id, ip: "203.0.113.185", type: "cpanel", expected: "active", actual: "expired", fixable: false, fix: expect.stringContaining("cPanel Manage2") },
    ]);
    expect(fixed).toEqual([]);
    expect(manual).toHaveLength(1);
    expect(sbs.manage2.ledger().map((c) => c.op)).toEqual(["add"]);
  });

  it("the licence of a suspended Manage2 service, reactivated behind the bridge's back, is expired again by fix through the service's queue", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", "203.0.113.186");
    await suspend(bridge, id);
    const licenseid = sbs.manage2.licenses()[0]!.licenseid;
    await manage2BehindTheBridge(sbs).licenseReActivate({ liscid: licenseid, dryrun: false });
    const charged = sbs.manage2.ledger().length;

    const { drift, fixed } = await reconcile(bridge, true);

    expect(drift).toEqual([expect.objectContaining({ kind: "status_differs", provider: "manage2", service_id: id, expected: "suspended", actual: "active", fixable: true })]);
    expect(fixed).toEqual([expect.objectContaining({ kind: "status_differs", provider: "manage2", service_id: id })]);
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, status: 2 }]);
    expect(sbs.manage2.ledger()).toHaveLength(charged);
    expect((await bridge.service.queue.list({ kind: JOB_KINDS.enforceSuspension }))[0]).toMatchObject({ state: "succeeded", queueKey: serviceQueueKey(id) });
  });

  it("a CLN licence of a suspended service, registered again behind the bridge's back, is removed by fix: CLN stops billing it", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", "203.0.113.187");
    await suspend(bridge, id);
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.187", type: CLN_CLOUDLINUX });
    const bought = sbs.cln.ledger().length;

    const { drift, fixed } = await reconcile(bridge, true);

    expect(drift).toEqual([expect.objectContaining({ kind: "status_differs", provider: "cln", service_id: id, type: "cloudlinux", expected: "suspended", actual: "active", fixable: true })]);
    expect(fixed).toHaveLength(1);
    expect(sbs.cln.licenses()).toEqual([]);
    expect(sbs.cln.ledger()).toHaveLength(bought);
  });

  it("a CLN licence removed behind the bridge's back is missing, naming CLN; reconcile never buys it again", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", "203.0.113.188");
    await clnBehindTheBridge(sbs).remove({ ip: "203.0.113.188", type: CLN_CLOUDLINUX });

    const { drift } = await reconcile(bridge, true);

    expect(drift).toEqual([
      { kind: "missing_upstream", provider: "cln", service_id: id, ip: "203.0.113.188", type: "cloudlinux", expected: "active", actual: "absent", fixable: false, fix: expect.stringContaining("CloudLinux CLN") },
    ]);
    expect(sbs.cln.ledger()).toHaveLength(1);
  });

  it("licences Manage2 and CLN hold that no service accounts for are unknown locally, each naming its provider", async () => {
    const { sbs, bridge } = await start();
    await orderActiveOf(bridge, "40", "203.0.113.189");
    await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.190", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.191", type: CLN_CLOUDLINUX });

    const { drift } = await reconcile(bridge);

    expect(drift.map((d) => [d.kind, d.provider, d.service_id, d.ip, d.type])).toEqual([
      ["unknown_locally", "manage2", null, "203.0.113.190", "cpanel"],
      ["unknown_locally", "cln", null, "203.0.113.191", "cloudlinux"],
    ]);
  });

  it("a Manage2 licence moved to another IP behind the bridge's back is recorded at its new IP", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", "203.0.113.192");
    await manage2BehindTheBridge(sbs).transfer({ oldip: "203.0.113.192", newip: "203.0.113.193", packageid: MANAGE2_ADMIN });

    const { drift, fixed } = await reconcile(bridge, true);

    expect(drift).toEqual([expect.objectContaining({ kind: "ip_differs", provider: "manage2", service_id: id, expected: "203.0.113.192", actual: "203.0.113.193", fixable: true })]);
    expect(fixed).toHaveLength(1);
    expect((await bridge.service.services.get(id))?.ip).toBe("203.0.113.193");
  });

  /** A Manage2 service suspended at `from` (its licence expired there), then moved to `to`: recorded, applied when it is unsuspended. */
  async function suspendedThenMoved(bridge: TestBridge, from: string, to: string): Promise<string> {
    const id = await orderActiveOf(bridge, "40", from);
    await suspend(bridge, id);
    await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: from }, changes: { ip: to } }));
    await waitFor(async () => (await bridge.service.services.get(id))?.ip === to);
    await untilIdle(bridge);
    return id;
  }

  it("a suspended Manage2 service that moved holds its expired licence at the IP it left by its licence id: no drift, and fix records nothing", async () => {
    const { sbs, bridge } = await start();
    const id = await suspendedThenMoved(bridge, "203.0.113.170", "203.0.113.171");

    expect(await reconcile(bridge, true)).toEqual({ drift: [], fixed: [], manual: [] });
    expect(await bridge.service.services.get(id)).toMatchObject({ ip: "203.0.113.171", status: "suspended", upstream_id: String(sbs.manage2.licenses()[0]!.licenseid) });
  });

  it("that licence is the suspended service's, not an order's waiting at the IP it left: no drift", async () => {
    const { bridge } = await start();
    await suspendedThenMoved(bridge, "203.0.113.172", "203.0.113.173");
    const order = createdEvent({ product_id: "40", ip: "203.0.113.172" });
    await bridge.send(order);
    await untilIdle(bridge);
    expect(await bridge.service.services.get(order.service.id)).toMatchObject({ status: "pending" });

    expect((await reconcile(bridge)).drift).toEqual([]);
  });

  it("that licence is not unknown locally where another Manage2 service holds another package at the IP it left", async () => {
    const { bridge } = await start();
    await suspendedThenMoved(bridge, "203.0.113.174", "203.0.113.175");
    await orderActiveOf(bridge, "43", "203.0.113.174");

    expect((await reconcile(bridge)).drift).toEqual([]);
  });

  it("a reseller licence and a Manage2 one of one type on one IP are two licences, each matched in its own provider's list", async () => {
    const { sbs, bridge } = await start();
    await orderActiveOf(bridge, "12", "203.0.113.194");
    const m2 = await orderActiveOf(bridge, "40", "203.0.113.194");
    await behindTheBridge(sbs.reseller).suspend({ ip: "203.0.113.194", type: "cpanel" });

    const { drift } = await reconcile(bridge);

    expect(drift.map((d) => [d.kind, d.provider, d.actual])).toEqual([["status_differs", "reseller", "suspended"]]);
    expect(drift.some((d) => d.service_id === m2)).toBe(false);
  });

  it("with no reseller configured, compares the providers it has", async () => {
    const { sbs, bridge } = await start({ withoutReseller: true });
    await orderActiveOf(bridge, "40", "203.0.113.195");
    const cln = await orderActiveOf(bridge, "41", "203.0.113.196");
    await clnBehindTheBridge(sbs).remove({ ip: "203.0.113.196", type: CLN_CLOUDLINUX });

    const { drift } = await reconcile(bridge);

    expect(drift.map((d) => [d.kind, d.provider, d.service_id])).toEqual([["missing_upstream", "cln", cln]]);
    expect(sbs.reseller.sandbox.requests()).toEqual([]);
  });

  it("a suspension repair queued before providers (no provider or SKU in its payload) is the reseller's", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "12", "203.0.113.197");
    await bridge.service.services.change({ serviceId: id, patch: { status: "suspended" } });

    await bridge.service.queue.enqueue({ kind: JOB_KINDS.enforceSuspension, serviceId: id, queueKey: serviceQueueKey(id), payload: { ip: "203.0.113.197", type: "cpanel" } });
    await waitFor(async () => (await bridge.service.queue.list({ kind: JOB_KINDS.enforceSuspension }))[0]?.state === "succeeded");

    expect(sbs.reseller.sandbox.licenses().find((l) => l.type === "cpanel")).toMatchObject({ ip: "203.0.113.197", status: "suspended" });
  });
});
