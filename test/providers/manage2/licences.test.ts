import { describe, expect, it } from "vitest";
import { AlreadyExistsError, ForbiddenError, UpstreamUnavailableError } from "../../../src/reseller/errors.js";
import { createManage2Licences, MANAGE2_CAPABILITIES, type Manage2Licences } from "../../../src/providers/manage2/index.js";
import { rejection } from "../../reseller/helpers.js";
import { ADMIN, GROUP, IP, NEW_IP, OTHER_GROUP, PRO, useManage2 } from "./helpers.js";

describe("Manage2 licences in the port's words", () => {
  const h = useManage2();
  const licences = (options: Parameters<typeof createManage2Licences>[1] = {}): Manage2Licences => createManage2Licences(h().client(), options);

  it("says what Manage2 can do: billed while active, suspended by expiry, an atomic change of IP", () => {
    expect(licences().capabilities).toBe(MANAGE2_CAPABILITIES);
    expect(MANAGE2_CAPABILITIES).toMatchObject({ renewal: "billed-while-active", suspension: "by-expiry", changeIp: "atomic", list: { status: true, expiry: false } });
  });

  it("acquire buys once, writing the intent into external_notes, never reactivating", async () => {
    const bought = await licences({ groupid: OTHER_GROUP }).acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "svc-42" });

    expect(bought).toEqual({ licenseid: 7000001, price: 15, monthly_price: 15 });
    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, packageid: ADMIN, groupid: OTHER_GROUP, external_notes: "lb:svc-42" }]);
    expect(h().sandbox.requests()[0]?.params).toMatchObject({ force: "0", reactivateok: "0", dryrun: "0", legal: "1" });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("after a lost add answer, findByIntent finds the licence that add made: nothing to buy again", async () => {
    h().sandbox.setFaults({ dropNext: 1 });
    const lost = await rejection(licences().acquire({ ip: IP, sku: { packageid: ADMIN, groupid: GROUP }, intent: "svc-42" }));
    expect(lost).toMatchObject({ mayHaveTakenEffect: true });

    const look = await licences().findByIntent({ ip: IP, packageid: ADMIN, intent: "svc-42" });

    expect(look.ours).toMatchObject({ licenseid: 7000001, status: "active", external_notes: "lb:svc-42" });
    expect(look.others).toEqual([]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("findByIntent finds nothing of ours when the lost add never happened, and shows what else is there", async () => {
    await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "someone-else" });
    h().sandbox.setFaults({ failNext: 1 });
    await rejection(licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "svc-42" }));

    const look = await licences().findByIntent({ ip: IP, packageid: ADMIN, intent: "svc-42" });

    expect(look.ours).toBeUndefined();
    expect(look.others).toMatchObject([{ licenseid: 7000001, external_notes: "lb:someone-else" }]);
  });

  it("findByIntent recognises ours after it expired, and among an operator's words", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "svc-42" });
    await h().client().updateActiveLicenseMetadata({ liscid: licenseid, external_notes: "lb:svc-42 moved from old box" });
    await licences().suspend(licenseid);

    const look = await licences().findByIntent({ ip: IP, packageid: ADMIN, intent: "svc-42" });

    expect(look.ours).toMatchObject({ licenseid, status: "expired" });
  });

  it("list reads the active and the expired licences; find finds an expired one by its id", async () => {
    const kept = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    const gone = await licences().acquire({ ip: NEW_IP, sku: { packageid: ADMIN }, intent: "b" });
    await licences().terminate(gone.licenseid);

    expect((await licences().list()).map((l) => [l.licenseid, l.status])).toEqual([
      [kept.licenseid, "active"],
      [gone.licenseid, "expired"],
    ]);
    expect(await licences().list({ includeExpired: false })).toHaveLength(1);
  });

  it("find asks again with expired=1 for a licence liscid alone does not show", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    await licences().terminate(licenseid, "Customer left", "other");
    const before = h().sandbox.requests().length;

    expect(await licences().find(licenseid)).toMatchObject({ licenseid, status: "expired" });
    expect(h().sandbox.requests().slice(before).map((r) => r.params.expired)).toEqual(["0", "1"]);
    expect(await licences().find(licenseid, { includeExpired: false })).toBeUndefined();
  });

  it("suspend expires the licence; unsuspend reactivates the same one, never a second", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });

    expect(await licences().suspend(licenseid)).toMatchObject({ already: false });
    expect(await licences().unsuspend(licenseid)).toMatchObject({ already: false, price: 0 });

    expect(h().sandbox.licenses()).toMatchObject([{ licenseid, status: 1 }]);
    expect(h().sandbox.ledger().map((c) => [c.op, c.licenseid, c.amount])).toEqual([
      ["add", licenseid, 15],
      ["reactivate", licenseid, 0],
    ]);
  });

  it("an unsuspension after the invoice of the 15th bills the reactivation fee, once", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: PRO }, intent: "a" });
    await licences().suspend(licenseid);
    h().clock.set("2025-03-16T09:00:00.000Z");

    expect(await licences().unsuspend(licenseid)).toMatchObject({ already: false, price: 25 });
    expect(h().sandbox.ledger().map((c) => [c.op, c.amount])).toEqual([
      ["add", 25],
      ["reactivate", 25],
    ]);
  });

  it("a suspension asked again after a lost answer finds it done and changes nothing", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    h().sandbox.setFaults({ dropNext: 1 });
    expect(await rejection(licences().suspend(licenseid))).toBeInstanceOf(UpstreamUnavailableError);

    expect(await licences().suspend(licenseid)).toMatchObject({ already: true, reason: `License ${licenseid} is already expired.` });
    expect(h().sandbox.timeline().map((e) => e.event)).toEqual(["added", "expired"]);
  });

  it("an expiry answered status 1 with result \"\" (the licence did not expire) is no success: it blocks for a person with Manage2's words, the licence still active", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    h().sandbox.answerNext({ fn: "XMLlicenseExpire", notExpired: true });
    h().sandbox.answerNext({ fn: "XMLlicenseExpire", notExpired: true });

    const notExpired = { disposition: "block", errorCode: "upstream_refused", mayHaveTakenEffect: false, upstreamMessage: "OK", message: expect.stringContaining(`licence ${licenseid} did not expire`) };
    expect(await rejection(licences().suspend(licenseid))).toMatchObject(notExpired);
    expect(await rejection(licences().terminate(licenseid))).toMatchObject(notExpired);
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid, status: 1 }]);

    expect(await licences().terminate(licenseid)).toMatchObject({ already: false });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid, status: 2 }]);
  });

  it("an unsuspension asked again after a lost answer is not billed twice", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    await licences().suspend(licenseid);
    h().sandbox.setDialect({ reactivationFee: "always" });
    h().sandbox.setFaults({ dropNext: 1 });
    expect(await rejection(licences().unsuspend(licenseid))).toMatchObject({ mayHaveTakenEffect: true });

    expect(await licences().unsuspend(licenseid)).toMatchObject({ already: true });
    expect(h().sandbox.ledger().map((c) => c.op)).toEqual(["add", "reactivate"]);
  });

  it("an unsuspension of a licence cPanel suspended is refused for the operator, not taken as done", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    h().sandbox.suspendLicense(licenseid);

    const error = await rejection(licences().unsuspend(licenseid));

    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ disposition: "block", upstreamMessage: `License ${licenseid} is suspended by cPanel and cannot be reactivated; contact cPanel.` });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("changeIp moves the licence in one step: the customer always holds one", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });

    expect(await licences().changeIp({ ip: IP, newip: NEW_IP, packageid: ADMIN })).toMatchObject({ already: false });

    const timeline = h().sandbox.timeline();
    expect(timeline.map((e) => [e.event, e.licenseid, e.from_ip, e.ip])).toEqual([
      ["added", licenseid, undefined, IP],
      ["transferred", licenseid, IP, NEW_IP],
    ]);
    for (const event of timeline) expect(h().sandbox.holdingsAfter(event.seq)).toHaveLength(1);
    expect(h().sandbox.holdingsAfter()).toEqual([{ licenseid, ip: NEW_IP, packageid: ADMIN }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("a change of IP asked again after a lost answer finds it moved", async () => {
    await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    h().sandbox.setFaults({ dropNext: 1 });
    await rejection(licences().changeIp({ ip: IP, newip: NEW_IP, packageid: ADMIN }));

    expect(await licences().changeIp({ ip: IP, newip: NEW_IP, packageid: ADMIN })).toMatchObject({ already: true });
    expect(h().sandbox.timeline().filter((e) => e.event === "transferred")).toHaveLength(1);
  });

  it("a refused change of IP keeps the old licence where it was", async () => {
    const { licenseid } = await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    await licences().acquire({ ip: NEW_IP, sku: { packageid: ADMIN }, intent: "b" });

    const error = await rejection(licences().changeIp({ ip: IP, newip: NEW_IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect(h().sandbox.licenses().find((l) => l.licenseid === licenseid)).toMatchObject({ ip: IP, status: 1 });
  });

  it("changeProduct updates the package and buys nothing", async () => {
    await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });

    expect(await licences().changeProduct({ ip: IP, from: ADMIN, to: PRO })).toMatchObject({ already: false });
    expect(h().sandbox.licenses()).toMatchObject([{ packageid: PRO }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("a refused change of product is a refusal for the operator, with Manage2's reason", async () => {
    await licences().acquire({ ip: IP, sku: { packageid: ADMIN }, intent: "a" });
    h().sandbox.setDialect({ packageUpdate: "refuse" });

    const error = await rejection(licences().changeProduct({ ip: IP, from: ADMIN, to: PRO }));

    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ disposition: "block" });
    expect(h().sandbox.licenses()).toMatchObject([{ packageid: ADMIN }]);
  });
});
