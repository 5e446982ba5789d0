import { describe, expect, it } from "vitest";
import { ADMIN, GROUP, IP, NEW_IP, OTHER_GROUP, PRO, useManage2 } from "./helpers.js";

describe.each(["POST", "GET"] as const)("the Manage2 client over %s against the sandbox", (method) => {
  const h = useManage2();
  const client = () => h().client({ method });
  const paramsOf = (n = 0) => h().sandbox.requests()[n]?.params;

  it("licenseAdd buys one licence and answers its id, prices and reason", async () => {
    const added = await client().licenseAdd({ ip: IP, packageid: ADMIN, external_notes: "lb:svc-1" });

    expect(added).toMatchObject({
      licenseid: 7000001,
      price: 15,
      monthly_price: 15,
      yearly: false,
      reason: "Activated CPANEL-ADMIN-CLOUD license on 203.0.113.10 in the 'license-bridge' group.",
    });
    expect(h().sandbox.ledger()).toMatchObject([{ op: "add", licenseid: 7000001, ip: IP, packageid: ADMIN, groupid: GROUP, amount: 15 }]);
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid: 7000001, ip: IP, status: 1, external_notes: "lb:svc-1" }]);
  });

  it("licenseAdd sends force, reactivateok and dryrun explicitly, legal=1 and output=json", async () => {
    await client().licenseAdd({ ip: IP, packageid: ADMIN });

    expect(paramsOf()).toEqual({ output: "json", ip: IP, packageid: "12345", force: "0", reactivateok: "0", dryrun: "0", legal: "1" });
  });

  it("licenseAdd adds to the group it names", async () => {
    await client().licenseAdd({ ip: IP, packageid: `P${ADMIN}`, groupid: `G${OTHER_GROUP}` });

    expect(h().sandbox.licenses()).toMatchObject([{ packageid: ADMIN, groupid: OTHER_GROUP }]);
  });

  it("licenseAddDryRun prices an add and buys nothing", async () => {
    const priced = await client().licenseAddDryRun({ ip: IP, packageid: PRO });

    expect(priced).toMatchObject({ price: 25, monthly_price: 25 });
    expect(paramsOf()).toMatchObject({ dryrun: "1" });
    expect(h().sandbox.ledger()).toEqual([]);
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("licenseExpire ends the licence, answering result OK", async () => {
    const { licenseid } = await client().licenseAdd({ ip: IP, packageid: ADMIN });

    const expired = await client().licenseExpire({ liscid: licenseid, reason: "Suspended for non-payment" });

    expect(expired).toMatchObject({
      licenseid,
      result: "OK",
      reason: "Expired CPANEL-ADMIN-CLOUD license 7000001 in the 'license-bridge' group on 203.0.113.10 for reason: Suspended for non-payment.",
    });
    expect(paramsOf(1)).toMatchObject({ liscid: "7000001", expcode: "normal" });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid, status: 2 }]);
  });

  it("licenseReActivate sends dryrun=0 and brings back the same licence", async () => {
    const { licenseid } = await client().licenseAdd({ ip: IP, packageid: ADMIN });
    await client().licenseExpire({ liscid: licenseid });

    const back = await client().licenseReActivate({ liscid: licenseid });

    expect(back).toMatchObject({ licenseid, price: 0, monthly_price: 15, reason: "Reactivated CPANEL-ADMIN-CLOUD license on 203.0.113.10 in the 'license-bridge' group." });
    expect(paramsOf(2)).toMatchObject({ liscid: String(licenseid), force: "0", dryrun: "0" });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid, status: 1 }]);
  });

  it("transfer moves the one licence of the package, keeping its id", async () => {
    const { licenseid } = await client().licenseAdd({ ip: IP, packageid: ADMIN });
    await client().licenseAdd({ ip: IP, packageid: 12360 });

    const moved = await client().transfer({ oldip: IP, newip: NEW_IP, packageid: ADMIN });

    expect(moved).toMatchObject({ oldip: IP, newip: NEW_IP, reason: `Transferred CPANEL-ADMIN-CLOUD license ${licenseid} in the 'license-bridge' group on ${IP} to ${NEW_IP}.` });
    expect(paramsOf(2)).toMatchObject({ packageid: String(ADMIN), force: "0", dryrun: "0" });
    expect(h().sandbox.licenses().map((l) => [l.licenseid, l.ip])).toEqual([
      [licenseid, NEW_IP],
      [licenseid + 1, IP],
    ]);
  });

  it("packageUpdate changes the licence's package and buys nothing", async () => {
    await client().licenseAdd({ ip: IP, packageid: ADMIN });

    const updated = await client().packageUpdate({ ip: IP, oldpackageid: ADMIN, newpackageid: PRO });

    expect(updated.reason).toBe("Updated package on 203.0.113.10 from CPANEL-ADMIN-CLOUD to CPANEL-PRO-CLOUD.");
    expect(h().sandbox.licenses()).toMatchObject([{ packageid: PRO }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("licenseInfo reads the active licences, and the expired ones only when asked", async () => {
    const kept = await client().licenseAdd({ ip: IP, packageid: ADMIN, external_notes: "lb:kept" });
    const gone = await client().licenseAdd({ ip: NEW_IP, packageid: ADMIN });
    h().clock.set("2025-03-12T08:00:00.000Z");
    await client().licenseExpire({ liscid: gone.licenseid });

    expect(await client().licenseInfo()).toEqual([
      {
        licenseid: kept.licenseid,
        ip: IP,
        status: "active",
        packageid: ADMIN,
        groupid: GROUP,
        external_notes: "lb:kept",
        adddate: "2025-03-10T10:00:00.000Z",
        expiredon: null,
        package_name: "CPANEL-ADMIN-CLOUD",
        producttype: 1,
      },
    ]);
    expect(await client().licenseInfo({ expired: true })).toMatchObject([{ licenseid: gone.licenseid, status: "expired", external_notes: null, expiredon: "2025-03-12T08:00:00.000Z" }]);
  });

  it("licenseInfo by liscid finds nothing for an expired licence unless asked for expired ones", async () => {
    const { licenseid } = await client().licenseAdd({ ip: IP, packageid: ADMIN });
    await client().licenseExpire({ liscid: licenseid });

    expect(await client().licenseInfo({ liscid: licenseid })).toEqual([]);
    expect(await client().licenseInfo({ liscid: licenseid, expired: true })).toMatchObject([{ licenseid, status: "expired" }]);
  });

  it("lookup answers the id of every licence on an IP", async () => {
    const a = await client().licenseAdd({ ip: IP, packageid: ADMIN });
    const b = await client().licenseAdd({ ip: IP, packageid: 12360 });

    expect(await client().lookup({ ip: IP })).toEqual([a.licenseid, b.licenseid]);
    expect(await client().lookup({ ip: IP, packageid: 12360 })).toEqual([b.licenseid]);
    expect(await client().lookup({ ip: NEW_IP })).toEqual([]);
  });

  it("rawLookup answers the active licences on an IP as records", async () => {
    const { licenseid } = await client().licenseAdd({ ip: IP, packageid: ADMIN, external_notes: "lb:raw" });

    expect(await client().rawLookup({ ip: IP })).toEqual([
      { licenseid, ip: IP, status: "active", packageid: ADMIN, groupid: GROUP, external_notes: "lb:raw", adddate: "2025-03-10T10:00:00.000Z", expiredon: null },
    ]);
    expect(paramsOf(1)).toMatchObject({ all: "1" });
  });

  it("packageInfo and groupInfo answer ids and names", async () => {
    expect(await client().packageInfo()).toContainEqual({ id: ADMIN, name: "CPANEL-ADMIN-CLOUD" });
    expect(await client().groupInfo()).toEqual([
      { id: GROUP, name: "license-bridge" },
      { id: OTHER_GROUP, name: "reserve" },
    ]);
  });

  it("updateActiveLicenseMetadata overwrites the notes", async () => {
    const { licenseid } = await client().licenseAdd({ ip: IP, packageid: ADMIN, external_notes: "lb:old" });

    expect((await client().updateActiveLicenseMetadata({ liscid: licenseid, external_notes: "lb:new" })).reason).toBe("Updated license metadata");
    expect(h().sandbox.licenses()).toMatchObject([{ external_notes: "lb:new" }]);
  });
});

describe.each(["numbers", "documented", "strings"] as const)("answers whose numbers are written as %s", (numbers) => {
  const h = useManage2({ dialect: { numbers } });

  it("read the same, whatever the type of each field", async () => {
    const client = h().client();
    const added = await client.licenseAdd({ ip: IP, packageid: ADMIN, external_notes: "lb:n" });
    await client.licenseAdd({ ip: IP, packageid: 12360 });

    expect(added).toMatchObject({ licenseid: 7000001, price: 15, monthly_price: 15, yearly: false });
    expect(await client.licenseInfo()).toMatchObject([
      { licenseid: 7000001, status: "active", packageid: ADMIN, groupid: GROUP, adddate: "2025-03-10T10:00:00.000Z", producttype: 1 },
      { licenseid: 7000002, packageid: 12360, producttype: 16 },
    ]);
    expect(await client.rawLookup({ ip: IP })).toMatchObject([{ licenseid: 7000001, status: "active", packageid: ADMIN, external_notes: "lb:n" }, { licenseid: 7000002 }]);
    expect(await client.lookup({ ip: IP })).toEqual([7000001, 7000002]);
    expect(await client.lookup({ ip: IP, all: false })).toEqual([7000001]);
    expect(await client.groupInfo()).toHaveLength(2);
    await client.licenseExpire({ liscid: 7000001 });
    expect(await client.licenseReActivate({ liscid: 7000001 })).toMatchObject({ licenseid: 7000001, price: 0, monthly_price: 15 });
  });
});

describe("shapes the sources leave open", () => {
  const h = useManage2();

  it.each(["array", "object"] as const)("packages as an %s read alike", async (packages) => {
    h().sandbox.setDialect({ packages });

    expect(await h().client().packageInfo()).toHaveLength(5);
  });

  it.each(["object", "array", "missing"] as const)("no licence, written as licenses %s, is an empty list", async (emptyLicenses) => {
    h().sandbox.setDialect({ emptyLicenses });

    expect(await h().client().licenseInfo()).toEqual([]);
  });

  it("a lookup answered status 0 for no licence is an empty list", async () => {
    h().sandbox.setDialect({ lookupNone: "status0" });

    expect(await h().client().lookup({ ip: IP })).toEqual([]);
  });

  it("an unknown licence id (Empty license.) is an empty list", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseInfo", refuse: "Empty license." });

    expect(await h().client().licenseInfo({ liscid: 42 })).toEqual([]);
  });

  it("one id as a number, several as a list, and ids with their letter are read", async () => {
    const client = h().client();
    const json = (body: unknown) => ({ http: 200, body: JSON.stringify(body), contentType: "application/json" });
    h().sandbox.answerNext({ fn: "XMLlookup", ...json({ status: "1", reason: "OK", licenseid: 5388377 }) });
    h().sandbox.answerNext({ fn: "XMLlookup", ...json({ status: 1, reason: "OK", licenseid: ["5388377", "L5388378"] }) });

    expect(await client.lookup({ ip: IP })).toEqual([5388377]);
    expect(await client.lookup({ ip: IP })).toEqual([5388377, 5388378]);
  });

  it("XMLRawlookup's package under packageid, and a null group, are read", async () => {
    h().sandbox.answerNext({
      fn: "XMLRawlookup",
      http: 200,
      contentType: "application/json",
      body: JSON.stringify({ status: 1, reason: "OK", license: [{ status: "1", ip: IP, licenseid: "8719562", packageid: "1706", groupid: null, external_notes: "", adddate: "1411420392", expiredon: "" }] }),
    });

    expect(await h().client().rawLookup({ ip: IP })).toEqual([
      { licenseid: 8719562, ip: IP, status: "active", packageid: 1706, groupid: null, external_notes: null, adddate: "2014-09-22T21:13:12.000Z", expiredon: null },
    ]);
  });
});
