import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { manualClock } from "../../src/clock.js";
import { addMonths } from "../../src/lifecycle/record.js";
import { CPANEL_INSTALL_COMMAND } from "../../src/vocabulary/manage2-products.js";
import { createClnClient } from "../../src/providers/cln/index.js";
import { createManage2Client } from "../../src/providers/manage2/index.js";
import { DEFAULT_CLN_SANDBOX_ACCOUNT } from "../../src/vocabulary/cln-sandbox-identity.js";
import { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS } from "../../src/vocabulary/manage2-sandbox-identity.js";
import { createdEvent, serviceEvent, type TestBridge } from "../helpers/bridge.js";
import { runDueJobs, untilIdle, waitForBridge, waitStatus } from "../helpers/e2e-harness.js";
import { CLN_CLOUDLINUX, CLN_CLOUDLINUX_PRO, CLN_IMUNIFY_30, CLN_IMUNIFY_SINGLE, MANAGE2_ADMIN, MANAGE2_PRO, orderActiveOf, useProviderBridges, type ProviderSandboxes } from "../helpers/providers.js";

/**
 * Section 12's table, row by row, for cPanel Manage2 and CloudLinux CLN: an in-process bridge
 * over loopback to each provider's sandbox (test/helpers/providers.ts), the sandboxes' ledgers
 * (what was billed) and timelines (what was held when) as the witnesses. Lost answers are the
 * sandboxes' `dropNext` fault (the change made, the connection dropped) on a bridge whose manual
 * clock is moved past the settle window, as test/e2e/settle.test.ts does for the reseller.
 */

const IP = "203.0.113.40";
const NEW_IP = "203.0.113.41";
const OTHER_IP = "203.0.113.42";
const SETTLE_SECONDS = 30;

const row = async (bridge: TestBridge, id: string) => (await bridge.service.services.get(id))!;
const historyOf = async (bridge: TestBridge, id: string) => (await bridge.service.services.history(id)).map((h) => `${h.action}: ${h.detail ?? ""}`);

/** The first job of `kind` once it is `state`. */
function jobOf(bridge: TestBridge, kind: string, state: string) {
  return waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind })).find((j) => j.state === state), 10_000, `a ${kind} job to be ${state}`);
}

/** A job of `kind` waits out the settle window after a lost answer; then the clock passes it and the due jobs run. */
async function settleWindowPasses(bridge: TestBridge, clock: ReturnType<typeof manualClock>, kind: string): Promise<void> {
  await waitForBridge(
    bridge,
    async () => (await bridge.service.queue.list({ kind })).some((j) => j.state === "queued" && j.lastError?.includes("RESELLER_SETTLE_SECONDS")),
    10_000,
    `the ${kind} job to wait out the settle window`,
  );
  clock.advance(SETTLE_SECONDS * 1000);
  await runDueJobs(bridge);
}

/** A copy of the bridge's catalogue without product `productId`, in the bridge's directory; its path. */
function catalogueWithout(bridge: TestBridge, productId: string): string {
  const catalogue = JSON.parse(readFileSync(bridge.env.PRODUCTS_FILE!, "utf8")) as { products: Record<string, unknown> };
  delete catalogue.products[productId];
  const path = join(bridge.dir, `products-without-${productId}.json`);
  writeFileSync(path, JSON.stringify(catalogue));
  return path;
}

/** The CLN licences held after each event of the timeline, so a test can say the customer always held one. */
function heldAfterEach(sbs: ProviderSandboxes): string[][] {
  const held = new Set<string>();
  return sbs.cln.timeline().map((e) => {
    const key = `${e.ip}/${e.type}`;
    if (e.event === "acquired") held.add(key);
    else held.delete(key);
    return [...held].sort();
  });
}

/**
 * What the XMLlicenseInfo reads since request `since` listed, each named once: a package's
 * licences, or (none named) the whole account's. Reads of one licence by its id (`liscid`) are
 * left out.
 */
function licenceListsRead(sbs: ProviderSandboxes, since: number): string[] {
  const lists = sbs.manage2
    .requests()
    .slice(since)
    .filter((r) => r.op === "XMLlicenseInfo" && !r.params.liscid)
    .map((r) => (r.params.packageid ? `package ${r.params.packageid}` : "the whole account"));
  return [...new Set(lists)];
}

/**
 * A Manage2 service suspended, its product changed while suspended (package 12345 to 12346, which
 * waits for the unsuspension: an expired licence cannot be updated), then unsuspended while
 * Manage2 refuses partners' package updates: the licence is reactivated (billed) and the
 * unsuspension's job blocks on the refused update, the service still suspended.
 */
async function unsuspensionWhoseMoveIsRefused({ sbs, bridge }: { sbs: ProviderSandboxes; bridge: TestBridge }) {
  const id = await orderActiveOf(bridge, "40", IP);
  const licenseid = sbs.manage2.licenses()[0]!.licenseid;
  await bridge.send(serviceEvent("service.suspended", id));
  await waitStatus(bridge, id, "suspended");
  await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "40" }, changes: { product_id: "43" } }));
  await waitForBridge(bridge, async () => (await row(bridge, id)).product_id === "43");

  sbs.manage2.setDialect({ packageUpdate: "refuse" });
  await bridge.send(serviceEvent("service.unsuspended", id));
  const unsuspend = await jobOf(bridge, "unsuspend", "blocked");
  expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, packageid: MANAGE2_ADMIN, status: 1 }]);
  expect((await row(bridge, id)).status).toBe("suspended");
  return { id, licenseid, unsuspend };
}

describe("cPanel Manage2 through the bridge", () => {
  const start = useProviderBridges();

  it("created: XMLlicenseAdd carrying the bridge's intent in external_notes, billed once, its licence id on the row, the catalogue's install command", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", IP);

    const [licence] = sbs.manage2.licenses();
    expect(licence).toMatchObject({ ip: IP, packageid: MANAGE2_ADMIN, groupid: 678, status: 1, external_notes: expect.stringMatching(/^lb:\S+$/) });
    expect(sbs.manage2.requests().find((r) => r.op === "XMLlicenseAdd")?.params).toMatchObject({ reactivateok: "0", force: "0", dryrun: "0" });
    expect(sbs.manage2.ledger()).toMatchObject([{ op: "add", licenseid: licence!.licenseid }]);
    expect(await row(bridge, id)).toMatchObject({ status: "active", provider: "manage2", sku: String(MANAGE2_ADMIN), upstream_id: String(licence!.licenseid) });
    expect((await bridge.provision("info", { service_identifier: id })).body).toMatchObject({ install_command: CPANEL_INSTALL_COMMAND });
  });

  it("renewed: nothing bought; paid-until and the term advance", async () => {
    const { sbs, bridge } = await start({ env: { RENEWAL_LEAD_DAYS: "40" } });
    const id = await orderActiveOf(bridge, "40", IP);
    const before = await row(bridge, id);

    await bridge.send(serviceEvent("service.renewed", id));
    const after = await waitForBridge(bridge, async () => {
      const r = await row(bridge, id);
      return r.expires_at !== before.expires_at && r;
    });

    expect(after.expires_at).toBe(addMonths(before.expires_at!, 1));
    expect(after.paid_until).toBe(addMonths(before.paid_until!, 1));
    expect(sbs.manage2.ledger()).toHaveLength(1);
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseAdd" || r.op === "XMLlicenseReActivate")).toHaveLength(1);
    expect(await historyOf(bridge, id)).toContainEqual(expect.stringMatching(/^renewed: 1 month\(s\).*nothing bought: cPanel Manage2 bills the licence each month it is active/));
  });

  it("suspended: XMLlicenseExpire; unsuspended: XMLlicenseReActivate of the same licence with dryrun=0, never a second add", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", IP);
    const licenseid = sbs.manage2.licenses()[0]!.licenseid;

    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, status: 2 }]);
    expect(sbs.manage2.requests().find((r) => r.op === "XMLlicenseExpire")?.params).toMatchObject({ liscid: String(licenseid) });

    await bridge.send(serviceEvent("service.unsuspended", id));
    await waitStatus(bridge, id, "active");
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, status: 1 }]);
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseReActivate").map((r) => r.params)).toMatchObject([{ liscid: String(licenseid), dryrun: "0" }]);
    expect(sbs.manage2.ledger().map((c) => c.op)).toEqual(["add", "reactivate"]);
  });

  it("terminated: XMLlicenseExpire, and the licence stays expired", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", IP);
    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");
    expect(sbs.manage2.licenses()).toMatchObject([{ status: 2 }]);
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseExpire")).toHaveLength(1);
  });

  it("ordered again after its termination: the same licence reactivated, no second add", async () => {
    const { sbs, bridge } = await start();
    const event = createdEvent({ product_id: "40", ip: IP });
    await bridge.send(event);
    await waitStatus(bridge, event.service.id, "active");
    await bridge.send(serviceEvent("service.terminated", event.service.id));
    await waitStatus(bridge, event.service.id, "terminated");

    await bridge.send(event);
    await waitStatus(bridge, event.service.id, "active");

    expect(sbs.manage2.licenses()).toMatchObject([{ status: 1 }]);
    expect(sbs.manage2.ledger().map((c) => c.op)).toEqual(["add", "reactivate"]);
  });

  /**
   * Issue 36's story: service X's licence is expired at IP by its suspension, X moves to NEW_IP
   * meanwhile (recorded, applied when it is unsuspended), and service Y orders the same package
   * at IP, which the intake allows (X's row says NEW_IP); Manage2 refuses Y's add for X's licence.
   */
  async function orderAtTheIpASuspendedServiceLeft(pair: { sbs: ProviderSandboxes; bridge: TestBridge }) {
    const { sbs, bridge } = pair;
    const x = await orderActiveOf(bridge, "40", IP);
    const licenseid = sbs.manage2.licenses()[0]!.licenseid;
    await bridge.send(serviceEvent("service.suspended", x));
    await waitStatus(bridge, x, "suspended");
    await bridge.send(serviceEvent("service.ip_changed", x, { service: { ip: IP }, changes: { ip: NEW_IP } }));
    await waitForBridge(bridge, async () => (await row(bridge, x)).ip === NEW_IP);

    const y = createdEvent({ product_id: "40", ip: IP });
    expect((await bridge.send(y)).status).toBe(202);
    await untilIdle(bridge);
    const [job] = await bridge.service.queue.list({ kind: "register", serviceId: y.service.id });
    return { x, y: y.service.id, licenseid, job: job! };
  }

  it("an order at the IP a suspended service moved away from does not take that service's expired licence: its job blocks naming the service, nothing reactivated; the unsuspension gets it back at the new IP", async () => {
    const { sbs, bridge } = await start();
    const { x, y, licenseid, job } = await orderAtTheIpASuspendedServiceLeft({ sbs, bridge });

    expect(job).toMatchObject({ state: "blocked", lastError: expect.stringContaining(`licence ${licenseid} at ${IP} is service ${x}'s (suspended; moving to ${NEW_IP} when it is unsuspended)`) });
    expect(job.lastError).toContain("one licence belongs to one service");
    expect(await row(bridge, y)).toMatchObject({ status: "pending", upstream_id: null });
    expect(sbs.manage2.ledger().map((c) => [c.op, c.licenseid])).toEqual([["add", licenseid]]);
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, ip: IP, status: 2 }]);

    await bridge.send(serviceEvent("service.unsuspended", x));
    await waitStatus(bridge, x, "active");
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, ip: NEW_IP, status: 1 }]);
    expect(await row(bridge, x)).toMatchObject({ ip: NEW_IP, upstream_id: String(licenseid) });
    expect(sbs.manage2.ledger().map((c) => [c.op, c.licenseid])).toEqual([
      ["add", licenseid],
      ["reactivate", licenseid],
    ]);
  });

  it("that blocked order, retried once the suspended service is unsuspended, buys a licence of its own", async () => {
    const { sbs, bridge } = await start();
    const { x, y, licenseid, job } = await orderAtTheIpASuspendedServiceLeft({ sbs, bridge });
    await bridge.send(serviceEvent("service.unsuspended", x));
    await waitStatus(bridge, x, "active");

    expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitStatus(bridge, y, "active");

    const bought = sbs.manage2.licenses().find((l) => l.licenseid !== licenseid);
    expect(bought).toMatchObject({ ip: IP, packageid: MANAGE2_ADMIN, status: 1 });
    expect(await row(bridge, y)).toMatchObject({ upstream_id: String(bought!.licenseid) });
    expect(sbs.manage2.ledger().map((c) => [c.op, c.licenseid])).toEqual([
      ["add", licenseid],
      ["reactivate", licenseid],
      ["add", bought!.licenseid],
    ]);
  });

  it("that blocked order, retried once the suspended service is terminated, takes over its licence: reactivated once, for the order", async () => {
    const { sbs, bridge } = await start();
    const { x, y, licenseid, job } = await orderAtTheIpASuspendedServiceLeft({ sbs, bridge });
    await bridge.send(serviceEvent("service.terminated", x));
    await waitStatus(bridge, x, "terminated");

    expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitStatus(bridge, y, "active");

    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, ip: IP, status: 1 }]);
    expect(await row(bridge, y)).toMatchObject({ upstream_id: String(licenseid) });
    expect(sbs.manage2.ledger().map((c) => [c.op, c.licenseid])).toEqual([
      ["add", licenseid],
      ["reactivate", licenseid],
    ]);
  });

  it("the forecast prices a renewal by the catalogue's price_per_month, and the sweep's renewal of it buys nothing", async () => {
    // A lead of 40 days makes a fresh monthly licence paid for a year due at once.
    const { sbs, bridge } = await start({ env: { RENEWAL_LEAD_DAYS: "40" } });
    const inAYear = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10);
    const event = createdEvent({ product_id: "40", ip: IP, next_due_date: inAYear });
    await bridge.send(event);
    const before = await waitStatus(bridge, event.service.id, "active");

    const forecast = await bridge.admin("/admin/forecast?days=7");
    expect(forecast.body.due).toEqual([expect.objectContaining({ service_id: event.service.id, cost: 15 })]);

    expect((await bridge.service.sweep.sweep()).queued).toHaveLength(1);
    await untilIdle(bridge);
    expect((await row(bridge, event.service.id)).expires_at).toBe(addMonths(before.expires_at!, 1));
    expect(sbs.manage2.ledger()).toHaveLength(1);
  });

  it("IP changed: XMLtransfer of the package, the same licence at the new IP, at no moment on neither", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", IP);
    const licenseid = sbs.manage2.licenses()[0]!.licenseid;

    await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));
    await waitForBridge(bridge, async () => (await row(bridge, id)).ip === NEW_IP);

    expect(sbs.manage2.requests().find((r) => r.op === "XMLtransfer")?.params).toMatchObject({ oldip: IP, newip: NEW_IP, packageid: String(MANAGE2_ADMIN) });
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, ip: NEW_IP, status: 1 }]);
    for (const e of sbs.manage2.timeline()) expect(sbs.manage2.holdingsAfter(e.seq)).toHaveLength(1);
    expect(sbs.manage2.ledger()).toHaveLength(1);
  });

  it("product changed: XMLpackageUpdate, the same licence on the new package, nothing bought", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", IP);
    await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "40" }, changes: { product_id: "43" } }));
    await waitForBridge(bridge, async () => (await row(bridge, id)).product_id === "43");

    expect(sbs.manage2.requests().find((r) => r.op === "XMLpackageUpdate")?.params).toMatchObject({ ip: IP, oldpackageid: String(MANAGE2_ADMIN), newpackageid: String(MANAGE2_PRO) });
    expect(sbs.manage2.licenses()).toMatchObject([{ packageid: MANAGE2_PRO, status: 1 }]);
    expect(await row(bridge, id)).toMatchObject({ sku: String(MANAGE2_PRO), upstream_id: String(sbs.manage2.licenses()[0]!.licenseid) });
    expect(sbs.manage2.ledger()).toHaveLength(1);
  });

  it("product changed, refused by Manage2: the job blocks for the operator with Manage2's reason; nothing bought, the service as it was", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", IP);
    sbs.manage2.setDialect({ packageUpdate: "refuse" });
    await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "40" }, changes: { product_id: "43" } }));

    const job = await jobOf(bridge, "change_product", "blocked");
    expect(job.lastError).toContain("A Partner does not have the ability to upgrade or downgrade a license directly");
    expect(await row(bridge, id)).toMatchObject({ product_id: "40", sku: String(MANAGE2_ADMIN) });
    expect(sbs.manage2.licenses()).toMatchObject([{ packageid: MANAGE2_ADMIN, status: 1 }]);
    expect(sbs.manage2.ledger()).toHaveLength(1);
  });

  it("an unsuspension that reactivated the licence but could not move it, then a termination: the licence is expired, not left billed behind a terminated service", async () => {
    const { sbs, bridge } = await start();
    const { id, licenseid, unsuspend } = await unsuspensionWhoseMoveIsRefused({ sbs, bridge });

    await bridge.send(serviceEvent("service.terminated", id));
    expect((await bridge.admin(`/admin/jobs/${unsuspend.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitStatus(bridge, id, "terminated");

    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, status: 2 }]);
    expect(sbs.manage2.ledger().map((c) => c.op)).toEqual(["add", "reactivate"]);
  });

  it("an unsuspension that reactivated the licence but could not move it keeps the reactivation recorded: its job cannot be cancelled while the licence is active, and its retry moves it without reactivating or billing again", async () => {
    const { sbs, bridge } = await start();
    const { id, licenseid, unsuspend } = await unsuspensionWhoseMoveIsRefused({ sbs, bridge });

    const cancel = await bridge.admin(`/admin/jobs/${unsuspend.id}/cancel`, { method: "POST" });
    expect(cancel).toMatchObject({ status: 409, body: { code: "conflict" } });

    sbs.manage2.setDialect({ packageUpdate: "allow" });
    expect((await bridge.admin(`/admin/jobs/${unsuspend.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitStatus(bridge, id, "active");

    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, packageid: MANAGE2_PRO, status: 1 }]);
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseReActivate")).toHaveLength(1);
    expect(sbs.manage2.ledger().map((c) => c.op)).toEqual(["add", "reactivate"]);
  });

  it("an unsuspension that reactivated the licence but whose transfer Manage2 refused as already held blocks (not failed), and a suspension after it expires the licence", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", IP);
    const licenseid = sbs.manage2.licenses()[0]!.licenseid;
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));
    await waitForBridge(bridge, async () => (await row(bridge, id)).ip === NEW_IP);
    sbs.manage2.answerNext({ fn: "XMLtransfer", refuse: `IP ${NEW_IP} already has a license` });
    await bridge.send(serviceEvent("service.unsuspended", id));

    const unsuspend = await jobOf(bridge, "unsuspend", "blocked");
    expect(unsuspend.lastError).toContain(`IP ${NEW_IP} already has a license`);
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, status: 1 }]);

    expect((await bridge.send(serviceEvent("service.suspended", id))).status).toBe(202);
    expect((await bridge.admin(`/admin/jobs/${unsuspend.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "suspend" })).some((j) => j.state === "succeeded" && j.createdAt > unsuspend.createdAt));
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, status: 2 }]);
    expect(sbs.manage2.ledger().map((c) => c.op)).toEqual(["add", "reactivate"]);
    expect((await row(bridge, id)).status).toBe("suspended");
  });

  it("a status 0 answer to the add is an error carrying Manage2's reason, never a purchase", async () => {
    const { sbs, bridge } = await start();
    sbs.manage2.answerNext({ fn: "XMLlicenseAdd", refuse: "Access denied: this IP is not an Access IP of the account." });
    const event = createdEvent({ product_id: "40", ip: IP });
    await bridge.send(event);

    const job = await jobOf(bridge, "register", "blocked");
    expect(job.lastError).toContain("Access denied: this IP is not an Access IP of the account.");
    expect((await row(bridge, event.service.id)).status).toBe("pending");
    expect(sbs.manage2.licenses()).toEqual([]);
    expect(sbs.manage2.ledger()).toEqual([]);
  });

  it("a lost XMLlicenseAdd answer: after the settle window the licence is found by its intent, bought once", async () => {
    const clock = manualClock(Date.now());
    const { sbs, bridge } = await start({ clock, env: { RESELLER_SETTLE_SECONDS: String(SETTLE_SECONDS) } });
    sbs.manage2.setFaults({ dropNext: 1 });
    const event = createdEvent({ product_id: "40", ip: IP });
    await bridge.send(event);

    await settleWindowPasses(bridge, clock, "register");
    await waitStatus(bridge, event.service.id, "active");

    expect(sbs.manage2.ledger()).toHaveLength(1);
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseAdd")).toHaveLength(1);
    expect((await row(bridge, event.service.id)).upstream_id).toBe(String(sbs.manage2.licenses()[0]!.licenseid));
  });

  it("an order that failed without learning whether its add happened, then terminated: the licence its add left is found by its intent and expired, not billed for a service that is gone", async () => {
    const clock = manualClock(Date.now());
    const { sbs, bridge } = await start({ clock, env: { RESELLER_SETTLE_SECONDS: String(SETTLE_SECONDS), JOB_MAX_ATTEMPTS: "2" } });
    sbs.manage2.setFaults({ dropNext: 1 });
    const event = createdEvent({ product_id: "40", ip: IP });
    await bridge.send(event);
    const id = event.service.id;
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "register" })).some((j) => j.state === "queued" && j.lastError?.includes("RESELLER_SETTLE_SECONDS")));
    // The look after the settle window cannot be made (Manage2 answers 503 for a while): the last attempt fails, its intent kept.
    sbs.manage2.setFaults({ failNext: 50 });
    clock.advance(SETTLE_SECONDS * 1000);
    await runDueJobs(bridge);
    const failed = await jobOf(bridge, "register", "failed");
    expect(failed.intent).not.toBeNull();
    expect((await row(bridge, id)).status).toBe("failed");
    sbs.manage2.setFaults({ failNext: 0 });
    const [licence] = sbs.manage2.licenses();
    expect(licence).toMatchObject({ ip: IP, status: 1 });

    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");

    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid: licence!.licenseid, status: 2 }]);
    expect(sbs.manage2.ledger().map((c) => c.op)).toEqual(["add"]);
    expect(await historyOf(bridge, id)).toContainEqual(expect.stringContaining(`licence ${licence!.licenseid}`));
  });

  it("a lost XMLlicenseReActivate answer: reactivated and billed once for the unsuspension, not once per attempt", async () => {
    const clock = manualClock(Date.now());
    const { sbs, bridge } = await start({ clock, env: { RESELLER_SETTLE_SECONDS: String(SETTLE_SECONDS) }, sandboxes: { manage2: { dialect: { reactivationFee: "always" } } } });
    const id = await orderActiveOf(bridge, "40", IP);
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");

    sbs.manage2.setFaults({ dropNext: 1 });
    await bridge.send(serviceEvent("service.unsuspended", id));
    await settleWindowPasses(bridge, clock, "unsuspend");
    await waitStatus(bridge, id, "active");

    expect(sbs.manage2.ledger().filter((c) => c.op === "reactivate")).toMatchObject([{ amount: 15 }]);
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseReActivate")).toHaveLength(1);
  });
  it("a change of IP whose XMLtransfer failed unanswered is not taken as done for an expired licence of the package at the new IP: the service's own licence, by its id, is moved", async () => {
    const clock = manualClock(Date.now());
    const { sbs, bridge } = await start({ clock });
    const gone = await orderActiveOf(bridge, "40", NEW_IP);
    await bridge.send(serviceEvent("service.terminated", gone));
    await waitStatus(bridge, gone, "terminated");
    const id = await orderActiveOf(bridge, "40", IP);
    const licenseid = (await row(bridge, id)).upstream_id;

    sbs.manage2.answerNext({ fn: "XMLtransfer", http: 503 });
    await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "change_ip" })).some((j) => j.state === "queued" && j.lastError), 10_000, "the change_ip job to wait for its retry");
    // Past any retry's backoff (RETRY_MAX_DELAY_SECONDS' default).
    clock.advance(300_000);
    await runDueJobs(bridge);
    await waitForBridge(bridge, async () => (await row(bridge, id)).ip === NEW_IP);

    expect(sbs.manage2.licenses().find((l) => String(l.licenseid) === licenseid)).toMatchObject({ ip: NEW_IP, status: 1 });
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLtransfer")).toHaveLength(2);
  });

  it("an unsuspension whose XMLlicenseReActivate failed unanswered is not taken as done for another active licence of the package at the IP: the service's own licence, by its id, is reactivated", async () => {
    const clock = manualClock(Date.now());
    const { sbs, bridge } = await start({ clock });
    const id = await orderActiveOf(bridge, "40", IP);
    const licenseid = (await row(bridge, id)).upstream_id;
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    // The service moves to package 12346 while suspended; someone adds a licence of that package at the IP in Manage2.
    await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "40" }, changes: { product_id: "43" } }));
    await waitForBridge(bridge, async () => (await row(bridge, id)).product_id === "43");
    const manage2 = createManage2Client({ baseUrl: sbs.manage2Running.url, ...DEFAULT_MANAGE2_SANDBOX_CREDENTIALS });
    try {
      await manage2.licenseAdd({ ip: IP, packageid: MANAGE2_PRO, force: false, reactivateok: false, external_notes: "someone else" });
    } finally {
      await manage2.close();
    }

    sbs.manage2.answerNext({ fn: "XMLlicenseReActivate", http: 503 });
    await bridge.send(serviceEvent("service.unsuspended", id));
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "unsuspend" })).some((j) => j.state === "queued" && j.lastError), 10_000, "the unsuspend job to wait for its retry");
    clock.advance(300_000);
    await runDueJobs(bridge);
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "unsuspend" })).some((j) => j.state === "blocked" || j.state === "succeeded"));

    // Reactivated on the second attempt; its package update then meets the other licence of 12346 there and waits for the operator.
    expect(sbs.manage2.licenses().find((l) => String(l.licenseid) === licenseid)).toMatchObject({ packageid: MANAGE2_ADMIN, status: 1 });
    expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseReActivate")).toHaveLength(2);
    expect(sbs.manage2.ledger().filter((c) => c.op === "reactivate")).toHaveLength(1);
    expect((await row(bridge, id)).status).toBe("suspended");
  });

  describe("a job asking about its licence reads the expired licences of its package only, never the whole account's (a partner's expired history grows for years)", () => {
    it("an order refused as already held: the package's expired licence at the IP reactivated for it, nothing added", async () => {
      const { sbs, bridge } = await start();
      const earlier = await orderActiveOf(bridge, "40", IP);
      const licenseid = sbs.manage2.licenses()[0]!.licenseid;
      await bridge.send(serviceEvent("service.terminated", earlier));
      await waitStatus(bridge, earlier, "terminated");
      const since = sbs.manage2.requests().length;

      const id = await orderActiveOf(bridge, "40", IP);

      expect(licenceListsRead(sbs, since)).toEqual([`package ${MANAGE2_ADMIN}`]);
      expect(sbs.manage2.requests().slice(since).filter((r) => r.op === "XMLlicenseAdd")).toHaveLength(1);
      expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, ip: IP, status: 1 }]);
      expect(sbs.manage2.ledger().map((c) => [c.op, c.licenseid])).toEqual([
        ["add", licenseid],
        ["reactivate", licenseid],
      ]);
      expect(await row(bridge, id)).toMatchObject({ upstream_id: String(licenseid) });
    });

    it("an unsuspension after a lost XMLlicenseReActivate answer: reactivated and billed once", async () => {
      const clock = manualClock(Date.now());
      const { sbs, bridge } = await start({ clock, env: { RESELLER_SETTLE_SECONDS: String(SETTLE_SECONDS) }, sandboxes: { manage2: { dialect: { reactivationFee: "always" } } } });
      const id = await orderActiveOf(bridge, "40", IP);
      await bridge.send(serviceEvent("service.suspended", id));
      await waitStatus(bridge, id, "suspended");
      const since = sbs.manage2.requests().length;

      sbs.manage2.setFaults({ dropNext: 1 });
      await bridge.send(serviceEvent("service.unsuspended", id));
      await settleWindowPasses(bridge, clock, "unsuspend");
      await waitStatus(bridge, id, "active");

      expect(licenceListsRead(sbs, since)).toEqual([`package ${MANAGE2_ADMIN}`]);
      expect(sbs.manage2.requests().filter((r) => r.op === "XMLlicenseReActivate")).toHaveLength(1);
      expect(sbs.manage2.ledger().filter((c) => c.op === "reactivate")).toHaveLength(1);
    });

    it("a change of IP after a lost XMLtransfer answer: the same licence at the new IP, moved once", async () => {
      const clock = manualClock(Date.now());
      const { sbs, bridge } = await start({ clock });
      const id = await orderActiveOf(bridge, "40", IP);
      const licenseid = sbs.manage2.licenses()[0]!.licenseid;
      const since = sbs.manage2.requests().length;

      sbs.manage2.setFaults({ dropNext: 1 });
      await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));
      await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "change_ip" })).some((j) => j.state === "queued" && j.lastError), 10_000, "the change_ip job to wait for its retry");
      // Past any retry's backoff (RETRY_MAX_DELAY_SECONDS' default).
      clock.advance(300_000);
      await runDueJobs(bridge);
      await waitForBridge(bridge, async () => (await row(bridge, id)).ip === NEW_IP);

      expect(licenceListsRead(sbs, since)).toEqual([`package ${MANAGE2_ADMIN}`]);
      expect(sbs.manage2.requests().filter((r) => r.op === "XMLtransfer")).toHaveLength(1);
      expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, ip: NEW_IP, status: 1 }]);
      expect(sbs.manage2.ledger()).toHaveLength(1);
    });
  });
});

describe("CloudLinux CLN through the bridge", () => {
  const start = useProviderBridges();

  it("created: register, billed once, CloudLinux's install command for an IP licence", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX }]);
    expect(sbs.cln.ledger()).toMatchObject([{ op: "register", ip: IP, type: CLN_CLOUDLINUX }]);
    expect(await row(bridge, id)).toMatchObject({ status: "active", provider: "cln", sku: String(CLN_CLOUDLINUX), upstream_id: null });
    expect((await bridge.provision("info", { service_identifier: id })).body.install_command).toMatch(/cldeploy -i/);
  });

  it("renewed: nothing bought; paid-until and the term advance", async () => {
    const { sbs, bridge } = await start({ env: { RENEWAL_LEAD_DAYS: "40" } });
    const id = await orderActiveOf(bridge, "41", IP);
    const before = await row(bridge, id);
    await bridge.send(serviceEvent("service.renewed", id));
    const after = await waitForBridge(bridge, async () => {
      const r = await row(bridge, id);
      return r.expires_at !== before.expires_at && r;
    });
    expect(after.expires_at).toBe(addMonths(before.expires_at!, 1));
    expect(after.paid_until).toBe(addMonths(before.paid_until!, 1));
    expect(sbs.cln.ledger()).toHaveLength(1);
    expect(sbs.cln.requests().filter((r) => r.op === "register")).toHaveLength(1);
  });

  it("suspended: remove; unsuspended: register again (a purchase), the same licence, never a second one", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);

    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    expect(sbs.cln.licenses()).toEqual([]);

    await bridge.send(serviceEvent("service.unsuspended", id));
    await waitStatus(bridge, id, "active");
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX }]);
    expect(sbs.cln.ledger().map((p) => [p.ip, p.type])).toEqual([
      [IP, CLN_CLOUDLINUX],
      [IP, CLN_CLOUDLINUX],
    ]);
  });

  it("terminated: remove", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");
    expect(sbs.cln.licenses()).toEqual([]);
    expect(sbs.cln.timeline().map((e) => [e.event, e.cause])).toEqual([
      ["acquired", "register"],
      ["released", "remove"],
    ]);
  });

  it("a suspended service whose licence is registered at CLN again (outside the bridge), then terminated: the licence is removed all the same", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    const cln = createClnClient({ baseUrl: sbs.clnRunning.url, login: DEFAULT_CLN_SANDBOX_ACCOUNT.login, secretKey: DEFAULT_CLN_SANDBOX_ACCOUNT.secretKey });
    try {
      await cln.register({ ip: IP, type: CLN_CLOUDLINUX });
    } finally {
      await cln.close();
    }

    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");

    expect(sbs.cln.licenses()).toEqual([]);
    expect(sbs.cln.timeline().map((e) => [e.event, e.cause])).toEqual([
      ["acquired", "register"],
      ["released", "remove"],
      ["acquired", "register"],
      ["released", "remove"],
    ]);
  });

  it("a suspended service terminated: CLN asked to remove it again, nothing there, nothing bought", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");

    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");

    expect(sbs.cln.requests().filter((r) => r.op === "remove")).toHaveLength(2);
    expect(sbs.cln.ledger()).toHaveLength(1);
    expect(await historyOf(bridge, id)).toContainEqual(expect.stringMatching(/^terminated: upstream remove; CloudLinux CLN has no .* licence for 203\.0\.113\.40, so there was nothing to remove$/));
  });

  it("ordered again after its termination: registered again", async () => {
    const { sbs, bridge } = await start();
    const event = createdEvent({ product_id: "41", ip: IP });
    await bridge.send(event);
    await waitStatus(bridge, event.service.id, "active");
    await bridge.send(serviceEvent("service.terminated", event.service.id));
    await waitStatus(bridge, event.service.id, "terminated");

    await bridge.send(event);
    await waitStatus(bridge, event.service.id, "active");
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX }]);
    expect(sbs.cln.ledger()).toHaveLength(2);
  });

  it("IP changed: the new IP registered, then the old removed: the customer always holds a licence", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));
    await waitForBridge(bridge, async () => (await row(bridge, id)).ip === NEW_IP);

    expect(sbs.cln.timeline().map((e) => [e.event, e.ip])).toEqual([
      ["acquired", IP],
      ["acquired", NEW_IP],
      ["released", IP],
    ]);
    for (const held of heldAfterEach(sbs)) expect(held.length).toBeGreaterThan(0);
    expect(sbs.cln.licenses()).toMatchObject([{ ip: NEW_IP, type: CLN_CLOUDLINUX }]);
  });

  it("IP changed, the register refused: nothing changes, the old licence is kept, the job carries CLN's message", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    sbs.cln.failNextRegister("Registration of new IP licenses is not allowed for this account");
    await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));

    const job = await jobOf(bridge, "change_ip", "blocked");
    expect(job.lastError).toContain("Registration of new IP licenses is not allowed for this account");
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX }]);
    expect(sbs.cln.requests().filter((r) => r.op === "remove")).toEqual([]);
    expect((await row(bridge, id)).ip).toBe(IP);
  });

  it("IP changed, the old licence's removal refused: the service records the new IP at once (the old licence still to be removed, which reconcile shows as unknown locally), and the job's retry removes it", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    sbs.cln.failNextRemove("Removing IP licenses is not allowed for this account");
    await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));

    const job = await jobOf(bridge, "change_ip", "blocked");
    expect(job.lastError).toContain("Removing IP licenses is not allowed for this account");
    expect(await row(bridge, id)).toMatchObject({ ip: NEW_IP, status: "active" });
    expect(await historyOf(bridge, id)).toContainEqual(`ip changed: ${IP} → ${NEW_IP}: registered at ${NEW_IP}; the licence at ${IP} is still to be removed`);
    expect((await bridge.admin(`/admin/jobs/${job.id}/cancel`, { method: "POST" })).status).toBe(409);
    const reconciled = await bridge.admin("/admin/reconcile", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ fix: false }) });
    expect(reconciled.body.drift).toEqual([expect.objectContaining({ kind: "unknown_locally", provider: "cln", ip: IP })]);

    expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "change_ip" })).find((j) => j.id === job.id && j.state === "succeeded"));
    expect(sbs.cln.licenses()).toMatchObject([{ ip: NEW_IP, type: CLN_CLOUDLINUX }]);
    expect(sbs.cln.ledger().map((p) => p.ip)).toEqual([IP, NEW_IP]);
    expect(await row(bridge, id)).toMatchObject({ ip: NEW_IP, last_error: null });
  });

  it("IP changed, the old licence's removal refused: an order of the same CLN type at the old IP is refused as in use by the changed service until its retry removes the licence", async () => {
    const { sbs, bridge } = await start();
    const a = await orderActiveOf(bridge, "41", IP);
    sbs.cln.failNextRemove("Removing IP licenses is not allowed for this account");
    await bridge.send(serviceEvent("service.ip_changed", a, { service: { ip: IP }, changes: { ip: NEW_IP } }));
    const job = await jobOf(bridge, "change_ip", "blocked");

    const refused = await bridge.send(createdEvent({ product_id: "41", ip: IP }));
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: "ip_in_use", errors: { "service.ip": [expect.stringContaining(`held by service ${a}`)] } });

    expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "change_ip" })).find((j) => j.id === job.id && j.state === "succeeded"));
    const b = await orderActiveOf(bridge, "41", IP);
    expect(await row(bridge, b)).toMatchObject({ ip: IP, status: "active" });
    expect(sbs.cln.ledger().map((p) => p.ip)).toEqual([IP, NEW_IP, IP]);
  });

  it("product changed by a register of the new type, the old type's removal refused: an order of the old type at the IP is refused as in use by the changed service", async () => {
    const { sbs, bridge } = await start();
    const a = await orderActiveOf(bridge, "41", IP);
    sbs.cln.failNextRemove("Removing IP licenses is not allowed for this account");
    await bridge.send(serviceEvent("service.product_changed", a, { service: { product_id: "41" }, changes: { product_id: "45" } }));
    await jobOf(bridge, "change_product", "blocked");

    const refused = await bridge.send(createdEvent({ product_id: "41", ip: IP }));
    expect(refused.body).toMatchObject({ code: "ip_in_use", errors: { "service.ip": [expect.stringContaining(`held by service ${a}`)] } });
    expect(sbs.cln.ledger()).toHaveLength(2);
  });

  it("IP changed, the old licence's removal refused, and another service now holds the old IP's licence (as a bridge before the one-licence check counted pending removals may have left it): the retry leaves that service's licence, recording it as that service's", async () => {
    const { sbs, bridge } = await start();
    const a = await orderActiveOf(bridge, "41", IP);
    sbs.cln.failNextRemove("Removing IP licenses is not allowed for this account");
    await bridge.send(serviceEvent("service.ip_changed", a, { service: { ip: IP }, changes: { ip: NEW_IP } }));
    const job = await jobOf(bridge, "change_ip", "blocked");
    const b = await orderActiveOf(bridge, "41", OTHER_IP);
    await bridge.service.services.change({ serviceId: b, patch: { ip: IP } });

    expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "change_ip" })).find((j) => j.id === job.id && j.state === "succeeded"));

    expect(sbs.cln.licenses()).toContainEqual(expect.objectContaining({ ip: IP, type: CLN_CLOUDLINUX }));
    expect(sbs.cln.requests().filter((r) => r.op === "remove")).toHaveLength(1);
    expect(await historyOf(bridge, a)).toContainEqual(expect.stringContaining(`${CLN_CLOUDLINUX} at ${IP} not removed: service ${b} holds it now`));
  });

  it("product changed within Imunify360: CLN's convert in place, nothing bought", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "42", IP);
    await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "42" }, changes: { product_id: "44" } }));
    await waitForBridge(bridge, async () => (await row(bridge, id)).product_id === "44");

    expect(sbs.cln.requests().find((r) => r.op === "convert")?.params).toMatchObject({ ip: IP, type: String(CLN_IMUNIFY_SINGLE), type_to: String(CLN_IMUNIFY_30) });
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_IMUNIFY_30 }]);
    expect(await row(bridge, id)).toMatchObject({ sku: String(CLN_IMUNIFY_30), type: "imunify360" });
    expect(sbs.cln.ledger()).toHaveLength(1);
  });

  it("product changed where CLN has no conversion: the new type registered, then the old removed", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "41" }, changes: { product_id: "45" } }));
    await waitForBridge(bridge, async () => (await row(bridge, id)).product_id === "45");

    expect(sbs.cln.timeline().map((e) => [e.event, e.type])).toEqual([
      ["acquired", CLN_CLOUDLINUX],
      ["acquired", CLN_CLOUDLINUX_PRO],
      ["released", CLN_CLOUDLINUX],
    ]);
    expect(await row(bridge, id)).toMatchObject({ sku: String(CLN_CLOUDLINUX_PRO), type: "cloudlinux" });
    expect(sbs.cln.ledger().map((p) => p.type)).toEqual([CLN_CLOUDLINUX, CLN_CLOUDLINUX_PRO]);
  });

  it("product changed by a register of the new type, the old type's removal refused: the service records the new product at once, and the job's retry removes the old licence", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    sbs.cln.failNextRemove("Removing IP licenses is not allowed for this account");
    await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "41" }, changes: { product_id: "45" } }));

    const job = await jobOf(bridge, "change_product", "blocked");
    expect(await row(bridge, id)).toMatchObject({ product_id: "45", sku: String(CLN_CLOUDLINUX_PRO), status: "active" });
    expect(await historyOf(bridge, id)).toContainEqual(
      `product changed: product 41 → 45: ${CLN_CLOUDLINUX_PRO} registered at CloudLinux CLN; ${CLN_CLOUDLINUX} at ${IP} is still to be removed`,
    );

    expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "change_product" })).find((j) => j.id === job.id && j.state === "succeeded"));
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX_PRO }]);
    expect(sbs.cln.ledger().map((p) => p.type)).toEqual([CLN_CLOUDLINUX, CLN_CLOUDLINUX_PRO]);
  });

  it("product changed by a register of the new type, the old type's removal refused, then the new product taken out of the catalogue: the job's retry still removes the old licence", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "41", IP);
    sbs.cln.failNextRemove("Removing IP licenses is not allowed for this account");
    await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "41" }, changes: { product_id: "45" } }));
    const job = await jobOf(bridge, "change_product", "blocked");
    bridge.service.reload(loadConfig({ env: { ...bridge.env, PRODUCTS_FILE: catalogueWithout(bridge, "45") }, cwd: process.cwd() }));

    expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "change_product" })).find((j) => j.id === job.id && j.state === "succeeded"));
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX_PRO }]);
    expect(await row(bridge, id)).toMatchObject({ product_id: "45", sku: String(CLN_CLOUDLINUX_PRO), last_error: null });
  });

  it("an order that failed without learning whether its register happened, then terminated: the licence at the IP is removed, not billed for a service that is gone", async () => {
    const clock = manualClock(Date.now());
    const { sbs, bridge } = await start({ clock, env: { RESELLER_SETTLE_SECONDS: String(SETTLE_SECONDS), JOB_MAX_ATTEMPTS: "2" } });
    sbs.cln.setFaults({ dropNext: 1 });
    const event = createdEvent({ product_id: "41", ip: IP });
    await bridge.send(event);
    const id = event.service.id;
    await waitForBridge(bridge, async () => (await bridge.service.queue.list({ kind: "register" })).some((j) => j.state === "queued" && j.lastError?.includes("RESELLER_SETTLE_SECONDS")));
    // The look after the settle window cannot be made (CLN answers 503 for a while): the last attempt fails, its intent kept.
    sbs.cln.setFaults({ failNext: 50 });
    clock.advance(SETTLE_SECONDS * 1000);
    await runDueJobs(bridge);
    expect((await jobOf(bridge, "register", "failed")).intent).not.toBeNull();
    sbs.cln.setFaults({ failNext: 0 });
    expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX }]);

    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");

    expect(sbs.cln.licenses()).toEqual([]);
    expect(sbs.cln.ledger()).toHaveLength(1);
  });

  it("a success: false answer to the register is an error carrying CLN's message, never a purchase", async () => {
    const { sbs, bridge } = await start();
    sbs.cln.failNextRegister("IP licenses are not allowed for this account");
    const event = createdEvent({ product_id: "41", ip: IP });
    await bridge.send(event);

    const job = await jobOf(bridge, "register", "blocked");
    expect(job.lastError).toContain("IP licenses are not allowed for this account");
    expect((await row(bridge, event.service.id)).status).toBe("pending");
    expect(sbs.cln.ledger()).toEqual([]);
  });

  describe("a lost register answer ends with one purchase", () => {
    const lostAnswer = async (): Promise<{ sbs: ProviderSandboxes; bridge: TestBridge; clock: ReturnType<typeof manualClock> }> => {
      const clock = manualClock(Date.now());
      const pair = await start({ clock, env: { RESELLER_SETTLE_SECONDS: String(SETTLE_SECONDS) } });
      return { ...pair, clock };
    };

    it("on create", async () => {
      const { sbs, bridge, clock } = await lostAnswer();
      sbs.cln.setFaults({ dropNext: 1 });
      const event = createdEvent({ product_id: "41", ip: IP });
      await bridge.send(event);
      await settleWindowPasses(bridge, clock, "register");
      await waitStatus(bridge, event.service.id, "active");
      expect(sbs.cln.ledger()).toHaveLength(1);
    });

    it("on unsuspend", async () => {
      const { sbs, bridge, clock } = await lostAnswer();
      const id = await orderActiveOf(bridge, "41", IP);
      await bridge.send(serviceEvent("service.suspended", id));
      await waitStatus(bridge, id, "suspended");
      sbs.cln.setFaults({ dropNext: 1 });
      await bridge.send(serviceEvent("service.unsuspended", id));
      await settleWindowPasses(bridge, clock, "unsuspend");
      await waitStatus(bridge, id, "active");
      expect(sbs.cln.ledger()).toHaveLength(2);
      expect(sbs.cln.requests().filter((r) => r.op === "register")).toHaveLength(2);
    });

    it("on a change of IP", async () => {
      const { sbs, bridge, clock } = await lostAnswer();
      const id = await orderActiveOf(bridge, "41", IP);
      sbs.cln.setFaults({ dropNext: 1 });
      await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: IP }, changes: { ip: NEW_IP } }));
      await settleWindowPasses(bridge, clock, "change_ip");
      await waitForBridge(bridge, async () => (await row(bridge, id)).ip === NEW_IP);
      await untilIdle(bridge);
      expect(sbs.cln.ledger().map((p) => p.ip)).toEqual([IP, NEW_IP]);
      expect(sbs.cln.licenses()).toMatchObject([{ ip: NEW_IP }]);
      for (const held of heldAfterEach(sbs)) expect(held.length).toBeGreaterThan(0);
    });

    it("on a change of product", async () => {
      const { sbs, bridge, clock } = await lostAnswer();
      const id = await orderActiveOf(bridge, "41", IP);
      sbs.cln.setFaults({ dropNext: 1 });
      await bridge.send(serviceEvent("service.product_changed", id, { service: { product_id: "41" }, changes: { product_id: "45" } }));
      await settleWindowPasses(bridge, clock, "change_product");
      await waitForBridge(bridge, async () => (await row(bridge, id)).product_id === "45");
      expect(sbs.cln.ledger().map((p) => p.type)).toEqual([CLN_CLOUDLINUX, CLN_CLOUDLINUX_PRO]);
      expect(sbs.cln.licenses()).toMatchObject([{ ip: IP, type: CLN_CLOUDLINUX_PRO }]);
    });
  });
});
