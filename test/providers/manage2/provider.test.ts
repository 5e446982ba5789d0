import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/catalog.js";
import { JobBlockedError } from "../../../src/jobs/errors.js";
import { createManage2Provider } from "../../../src/providers/manage2/index.js";
import type { LicenceProvider } from "../../../src/providers/port.js";
import { rejection } from "../../reseller/helpers.js";
import { ADMIN, GROUP, IP, NEW_IP, OTHER_GROUP, PRO, useManage2 } from "./helpers.js";

/** Products 40 (the contract's example, filed in the other group) and 43, a second package with an install command of its own. */
const catalog = parseCatalog({
  billing_cycles: { monthly: 1 },
  products: {
    "40": { provider: "manage2", type: "cpanel", package_id: ADMIN, group_id: OTHER_GROUP },
    "43": { provider: "manage2", type: "cpanel", package_id: PRO, install_command: "curl https://install.example/{ip} | sh" },
  },
});
if (!catalog.ok) throw new Error(catalog.problems.join("\n"));
const ADMIN_PRODUCT = { kind: "licence", type: "cpanel", sku: String(ADMIN), product_id: "40" } as const;

describe("Manage2 as a licence provider", () => {
  const h = useManage2();
  const provider = (): LicenceProvider => createManage2Provider(h().client(), { catalog: () => catalog.catalog, groupId: GROUP });
  const held = (licenseid?: number) => ({ ip: IP, sku: String(ADMIN), ...(licenseid ? { upstreamId: String(licenseid) } : {}) });

  it("buys the product's package in the product's group, the intent in external_notes, and answers the licence id", async () => {
    const bought = await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "4711.7" });

    expect(bought).toEqual({ bought: { upstreamId: "7000001" } });
    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, packageid: ADMIN, groupid: OTHER_GROUP, external_notes: "lb:4711.7" }]);
    expect(h().sandbox.ledger()).toMatchObject([{ op: "add", packageid: ADMIN }]);
  });

  it("a package already on the IP is an answer, not a failure: already held, nothing bought", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "first" });
    expect(await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "second" })).toEqual({ alreadyHeld: true });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("an expired licence of the package on the IP is already held too: the add never reactivates (and bills) it", async () => {
    const first = await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "first" });
    await provider().suspend(held(Number((first as { bought: { upstreamId: string } }).bought.upstreamId)));

    expect(await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "second" })).toEqual({ alreadyHeld: true });
    expect(await provider().holdingsAt(IP)).toMatchObject([{ sku: String(ADMIN), state: "expired", upstreamId: "7000001", intentTag: "first" }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("holdings asked about a package read the expired licences of that package only, never the whole account's", async () => {
    const first = await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "first" });
    await provider().suspend(held(Number((first as { bought: { upstreamId: string } }).bought.upstreamId)));
    await provider().buy(IP, { kind: "licence", type: "cpanel", sku: String(PRO), product_id: "43" }, 1, { intent: "other" });
    const before = h().sandbox.requests().length;

    expect(await provider().holdingsAt(IP, { skus: [String(ADMIN)] })).toMatchObject([{ sku: String(ADMIN), state: "expired", upstreamId: "7000001" }]);

    const expiredReads = h().sandbox.requests().slice(before).filter((r) => r.op === "XMLlicenseInfo");
    expect(expiredReads.map((r) => r.params)).toEqual([expect.objectContaining({ expired: "1", packageid: String(ADMIN) })]);
  });

  it("holdings asked about no package in particular are every licence at the IP, expired ones included", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "first" });
    await provider().suspend(held(7000001));
    await provider().buy(IP, { kind: "licence", type: "cpanel", sku: String(PRO), product_id: "43" }, 1, { intent: "other" });

    expect(await provider().holdingsAt(IP)).toMatchObject([
      { sku: String(PRO), state: "active" },
      { sku: String(ADMIN), state: "expired" },
    ]);
  });

  it("after a lost add answer, finds the licence that add made by its intent, and not another one", async () => {
    h().sandbox.setFaults({ dropNext: 1 });
    expect(await rejection(provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "4711.7" }))).toMatchObject({ mayHaveTakenEffect: true });

    expect(await provider().findPurchase(IP, ADMIN_PRODUCT, { intent: "4711.7" })).toMatchObject([{ upstreamId: "7000001", state: "active", intentTag: "4711.7" }]);
    expect(await provider().findPurchase(IP, ADMIN_PRODUCT, { intent: "4711.8" })).toBeUndefined();
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("a status 0 answer is an error carrying Manage2's reason, never a purchase", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseAdd", refuse: "Your account is on hold." });
    const error = (await rejection(provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" }))) as Error;
    expect(error.message).toContain("Your account is on hold.");
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("suspends by expiring the licence and unsuspends by reactivating the same one (dryrun=0)", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    expect(await provider().suspend(held(7000001))).toEqual({ done: true });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid: 7000001, status: 2 }]);

    expect(await provider().unsuspend(held(7000001))).toEqual({ done: true });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid: 7000001, status: 1 }]);
    expect(h().sandbox.requests().find((r) => r.op === "XMLlicenseReActivate")?.params).toMatchObject({ liscid: "7000001", dryrun: "0" });
  });

  it("suspending or unsuspending again is done already: nothing asked of Manage2 twice", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    await provider().suspend(held(7000001));
    expect(await provider().suspend(held(7000001))).toEqual({ done: true });
    await provider().unsuspend(held(7000001));
    expect(await provider().unsuspend(held(7000001))).toEqual({ done: true });
    expect(h().sandbox.requests().filter((r) => r.op === "XMLlicenseExpire" || r.op === "XMLlicenseReActivate")).toHaveLength(2);
  });

  it("unsuspends a licence moved while it was expired at its new IP: reactivated, then transferred", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    await provider().suspend(held(7000001));

    await provider().unsuspend({ ip: NEW_IP, sku: String(ADMIN), upstreamId: "7000001" });

    expect(h().sandbox.licenses()).toMatchObject([{ licenseid: 7000001, ip: NEW_IP, status: 1 }]);
  });

  it("a licence cPanel suspended blocks an unsuspension for the operator", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    h().sandbox.suspendLicense(7000001);
    expect(await provider().holdingsAt(IP)).toMatchObject([{ state: "other", stateText: "suspended by cPanel" }]);
    expect(await rejection(provider().unsuspend(held(7000001)))).toBeInstanceOf(JobBlockedError);
  });

  it("a licence cPanel suspended is expired by a suspension or a termination: lifting cPanel's suspension later does not bring it back billed", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    await provider().buy(NEW_IP, ADMIN_PRODUCT, 1, { intent: "y" });
    h().sandbox.suspendLicense(7000001);
    h().sandbox.suspendLicense(7000002);

    expect(await provider().suspend(held(7000001))).toEqual({ done: true });
    expect(await provider().terminate({ ip: NEW_IP, sku: String(ADMIN), upstreamId: "7000002" })).toEqual({ done: true });

    expect(h().sandbox.licenses()).toMatchObject([
      { licenseid: 7000001, status: 2 },
      { licenseid: 7000002, status: 2 },
    ]);
    expect(h().sandbox.requests().filter((r) => r.op === "XMLlicenseExpire").map((r) => r.params.liscid)).toEqual(["7000001", "7000002"]);
  });

  it("terminates by expiring; a licence Manage2 does not have is not held", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    expect(await provider().terminate(held(7000001))).toEqual({ done: true });
    expect(h().sandbox.licenses()).toMatchObject([{ status: 2 }]);
    expect(await provider().terminate({ ip: NEW_IP, sku: String(ADMIN) })).toMatchObject({ done: false });
  });

  it("changes the IP with XMLtransfer of this package only", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    await provider().changeIp(held(7000001), NEW_IP);
    expect(h().sandbox.requests().find((r) => r.op === "XMLtransfer")?.params).toMatchObject({ oldip: IP, newip: NEW_IP, packageid: String(ADMIN) });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid: 7000001, ip: NEW_IP }]);
  });

  it("changes the package with XMLpackageUpdate; a refusal blocks the job with Manage2's reason, nothing bought", async () => {
    await provider().buy(IP, ADMIN_PRODUCT, 1, { intent: "x" });
    expect(provider().changesProductInPlace(String(ADMIN), String(PRO))).toBe(true);
    await provider().changeProduct(held(7000001), { sku: String(PRO), type: "cpanel" });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid: 7000001, packageid: PRO }]);

    h().sandbox.setDialect({ packageUpdate: "refuse" });
    const refused = (await rejection(provider().changeProduct({ ip: IP, sku: String(PRO) }, { sku: String(ADMIN), type: "cpanel" }))) as Error;
    expect(refused).toBeInstanceOf(JobBlockedError);
    expect(refused.message).toContain("A Partner does not have the ability to upgrade or downgrade");
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("the install command is the catalogue product's template with the IP, else cPanel's own", async () => {
    expect(await provider().installCommand({ ip: IP, sku: String(PRO) }, { kind: "licence", type: "cpanel", product_id: "43" })).toBe(`curl https://install.example/${IP} | sh`);
    expect(await provider().installCommand(held(), ADMIN_PRODUCT)).toBe("cd /home && curl -o latest -L https://securedownloads.cpanel.net/latest && sh latest");
  });

  it("renews nothing: Manage2 bills each month the licence is active", async () => {
    expect(provider().capabilities.renewal).toBe("billed-while-active");
    await expect(provider().renew(held(), 1)).rejects.toThrow(/nothing to renew/);
  });
});
