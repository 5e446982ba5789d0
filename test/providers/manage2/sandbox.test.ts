import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_TOKENS } from "../../../src/vocabulary/sandbox-identity.js";
import { ADMIN, bodyOf, IP, NEW_IP, PRO, startManage2, useManage2, type Harness } from "./helpers.js";
import { until } from "../../reseller/helpers.js";
import { tempDirs } from "../../helpers/temp-dirs.js";

const add = (h: Harness, params: Record<string, string> = {}) => h.call("XMLlicenseAdd", { output: "json", ip: IP, packageid: String(ADMIN), ...params });

describe("the Manage2 sandbox's wire", () => {
  const h = useManage2();

  it("answers 401 without the account's credentials, and records the call", async () => {
    const none = await h().call("XMLgroupInfo", { output: "json" }, { auth: null });
    const wrong = await h().call("XMLgroupInfo", { output: "json" }, { auth: { user: "sandbox@manage2.invalid", password: "nope" } });

    expect(none.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(h().sandbox.requests()).toMatchObject([
      { via: "manage2", op: "XMLgroupInfo", status: 401 },
      { op: "XMLgroupInfo", status: 401 },
    ]);
  });

  it("answers status and reason at HTTP 200 as JSON when asked", async () => {
    const answer = await add(h());

    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      status: 1,
      reason: "Activated CPANEL-ADMIN-CLOUD license on 203.0.113.10 in the 'license-bridge' group.",
      licenseid: 7000001,
      price: 15,
      monthly_price: 15,
      yearly: 0,
      promoinfo: "",
    });
  });

  it("answers XML, Manage2's default, when JSON is not asked for", async () => {
    const answer = await h().call("XMLgroupInfo", {});

    expect(answer.type).toMatch(/xml/);
    expect(answer.text).toContain('<XMLgroupInfo version="0.5" status="1" reason="OK"><groups G678="license-bridge" G679="reserve"/></XMLgroupInfo>');
  });

  it("under POST reads the form only: output=json in the URL is ignored", async () => {
    const answer = await h().call("XMLgroupInfo", {}, { method: "POST", query: { output: "json" } });

    expect(answer.text).toMatch(/^<\?xml/);
    expect((await h().call("XMLgroupInfo", { output: "json" }, { method: "POST" })).body).toMatchObject({ status: 1 });
  });

  it("takes ; between parameters, and ids with or without their letter", async () => {
    const answer = await h().call("XMLlicenseAdd", {}, { raw: `output=json;ip=${IP};packageid=P0${ADMIN};groupid=G679` });

    expect(bodyOf(answer)).toMatchObject({ status: 1 });
    expect(h().sandbox.licenses()).toMatchObject([{ packageid: ADMIN, groupid: 679 }]);
  });

  it("writes every number as a string when told, as the older answers do", async () => {
    h().sandbox.setDialect({ numbers: "strings" });

    expect((await add(h())).body).toMatchObject({ status: "1", licenseid: "7000001", price: "15.00", yearly: "0" });
  });

  it("writes numbers as the documented examples type them when told", async () => {
    h().sandbox.setDialect({ numbers: "documented" });
    await add(h());

    expect((await add(h(), { ip: NEW_IP })).body).toMatchObject({ status: 1, licenseid: "7000002", price: "15.00", yearly: 0 });
    const info = bodyOf(await h().call("XMLlicenseInfo", { output: "json" }));
    expect((info.licenses as Record<string, Record<string, unknown>>).L7000001).toMatchObject({ licenseid: 7000001, status: 1, packageid: ADMIN });
    const raw = bodyOf(await h().call("XMLRawlookup", { output: "json", ip: IP }));
    expect((raw.license as Array<Record<string, unknown>>)[0]).toMatchObject({ status: "1", licenseid: "7000001", package: String(ADMIN) });
    expect(bodyOf(await h().call("XMLgroupInfo", { output: "json" })).version).toBe("0.5");
  });

  it("refuses external_notes over 64 characters with status 0", async () => {
    const answer = await add(h(), { external_notes: "x".repeat(65) });

    expect(answer.body).toEqual({ status: 0, reason: "The external_notes parameter must be 64 characters or fewer." });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("answers 404 for a function it does not know", async () => {
    expect((await h().call("XMLnothing", { output: "json" })).status).toBe(404);
  });
});

describe("the Manage2 sandbox's account", () => {
  const h = useManage2();

  it("an add that does not say reactivateok=0 reactivates an expired licence, as Manage2's default 1 does", async () => {
    await add(h());
    await h().call("XMLlicenseExpire", { output: "json", liscid: "7000001" });
    h().clock.set("2025-03-20T10:00:00.000Z");

    const again = await add(h());

    expect(again.body).toMatchObject({ status: 1, licenseid: 7000001, price: 15, reason: expect.stringMatching(/^Reactivated /) });
    expect(h().sandbox.ledger().map((c) => [c.op, c.amount])).toEqual([
      ["add", 15],
      ["reactivate", 15],
    ]);
  });

  it("an add with reactivateok=0 on an IP whose licence of that package expired is refused", async () => {
    await add(h());
    await h().call("XMLlicenseExpire", { output: "json", liscid: "7000001" });

    const again = await add(h(), { reactivateok: "0", force: "0" });

    expect(bodyOf(again)).toMatchObject({ status: 0, reason: expect.stringContaining("it is not allowed to add another") });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("a second add on an active IP and package is refused, or answers the licence there when told", async () => {
    await add(h());

    expect(bodyOf(await add(h()))).toMatchObject({ status: 0, reason: "203.0.113.10 already has an active CPANEL-ADMIN-CLOUD license (7000001)." });
    h().sandbox.setDialect({ duplicateAdd: "existing" });
    expect(bodyOf(await add(h()))).toMatchObject({ status: 1, licenseid: 7000001, price: 0 });
    expect(h().sandbox.ledger()).toHaveLength(1);
    expect(h().sandbox.licenses()).toHaveLength(1);
  });

  it("a reactivation without dryrun=0 changes nothing (the page's default is 1)", async () => {
    await add(h());
    await h().call("XMLlicenseExpire", { output: "json", liscid: "7000001" });

    const dry = await h().call("XMLlicenseReActivate", { output: "json", liscid: "7000001" });

    expect(bodyOf(dry)).toMatchObject({ status: 1, reason: expect.stringMatching(/^Dry run/) });
    expect(h().sandbox.licenses()).toMatchObject([{ status: 2 }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it.each([
    ["expired and reactivated before the invoice: no fee", "after-invoice", "2025-03-14T23:00:00.000Z", 0],
    ["expired before the 15th, reactivated after it: the licence's price", "after-invoice", "2025-03-15T00:00:00.000Z", 15],
    ["a fee every time, when told", "always", "2025-03-11T00:00:00.000Z", 15],
    ["never a fee, when told", "never", "2025-04-20T00:00:00.000Z", 0],
  ] as const)("a reactivation fee: %s", async (_what, reactivationFee, at, fee) => {
    h().sandbox.setDialect({ reactivationFee });
    await add(h());
    await h().call("XMLlicenseExpire", { output: "json", liscid: "7000001" });
    h().clock.set(at);

    const back = await h().call("XMLlicenseReActivate", { output: "json", liscid: "7000001", dryrun: "0" });

    expect(bodyOf(back)).toMatchObject({ status: 1, price: fee, licenseid: 7000001 });
    expect(h().sandbox.ledger().at(-1)).toMatchObject({ op: "reactivate", licenseid: 7000001, amount: fee });
  });

  it("a licence expired after the 15th and reactivated before the next invoice has no fee", async () => {
    h().clock.set("2025-03-16T00:00:00.000Z");
    await add(h());
    await h().call("XMLlicenseExpire", { output: "json", liscid: "7000001" });
    h().clock.set("2025-04-14T00:00:00.000Z");

    expect(bodyOf(await h().call("XMLlicenseReActivate", { output: "json", liscid: "7000001", dryrun: "0" }))).toMatchObject({ price: 0 });
  });

  it("a transfer without a package moves every licence on the IP, each as one move", async () => {
    await add(h());
    await add(h(), { packageid: "12360" });

    const moved = await h().call("XMLtransfer", { output: "json", oldip: IP, newip: NEW_IP });

    expect(bodyOf(moved)).toMatchObject({ status: 1, oldip: IP, newip: NEW_IP });
    expect(h().sandbox.licenses().map((l) => l.ip)).toEqual([NEW_IP, NEW_IP]);
    expect(h().sandbox.timeline().filter((e) => e.event === "transferred").map((e) => [e.licenseid, e.from_ip, e.ip])).toEqual([
      [7000001, IP, NEW_IP],
      [7000002, IP, NEW_IP],
    ]);
  });

  it("XMLlicenseInfo shows expired and suspended licences only with expired=1, liscid or not", async () => {
    await add(h());
    await add(h(), { ip: NEW_IP });
    await h().call("XMLlicenseExpire", { output: "json", liscid: "7000001" });
    h().sandbox.suspendLicense(7000002);

    expect(bodyOf(await h().call("XMLlicenseInfo", { output: "json", liscid: "7000001" })).licenses).toEqual({});
    const expired = bodyOf(await h().call("XMLlicenseInfo", { output: "json", expired: "1" })).licenses as Record<string, { status: number }>;
    expect(Object.entries(expired).map(([key, l]) => [key, l.status])).toEqual([
      ["L7000001", 2],
      ["L7000002", 4],
    ]);
  });

  it("a package update changes the package, or is refused with the support article's words when told", async () => {
    await add(h());

    expect(bodyOf(await h().call("XMLpackageUpdate", { output: "json", ip: IP, newpackageid: `P${PRO}` }))).toEqual({
      status: 1,
      reason: "Updated package on 203.0.113.10 from CPANEL-ADMIN-CLOUD to CPANEL-PRO-CLOUD.",
    });
    h().sandbox.setDialect({ packageUpdate: "refuse" });
    expect(bodyOf(await h().call("XMLpackageUpdate", { output: "json", ip: IP, newpackageid: `P${ADMIN}` }))).toMatchObject({ status: 0, reason: expect.stringMatching(/^A Partner does not have the ability/) });
    expect(h().sandbox.timeline().map((e) => [e.event, e.from_packageid, e.packageid])).toEqual([
      ["added", undefined, ADMIN],
      ["package-changed", ADMIN, PRO],
    ]);
  });

  it("bills on the 15th every licence held then, and none that expired before", async () => {
    await add(h());
    await add(h(), { ip: NEW_IP, packageid: String(PRO) });
    h().clock.set("2025-03-14T12:00:00.000Z");
    await h().call("XMLlicenseExpire", { output: "json", liscid: "7000002" });

    expect(h().sandbox.invoice("2025-03-20T00:00:00.000Z")).toEqual({
      on: "2025-03-15T00:00:00.000Z",
      lines: [{ licenseid: 7000001, ip: IP, packageid: ADMIN, amount: 15 }],
      total: 15,
    });
    expect(h().sandbox.invoice("2025-03-12T00:00:00.000Z")).toMatchObject({ on: "2025-02-15T00:00:00.000Z", lines: [], total: 0 });
  });

  it("an unknown licence id is Empty license.", async () => {
    expect(bodyOf(await h().call("XMLlicenseExpire", { output: "json", liscid: "42" }))).toEqual({ status: 0, reason: "Empty license." });
  });
});

describe("the Manage2 sandbox's faults", () => {
  const h = useManage2();

  it("failNext answers 503 before doing anything, before authentication", async () => {
    h().sandbox.setFaults({ failNext: 1 });

    const failed = await h().call("XMLlicenseAdd", { output: "json", ip: IP, packageid: String(ADMIN) }, { auth: null });

    expect(failed.status).toBe(503);
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("dropNext commits the add, then closes the socket without an answer", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    await expect(add(h())).rejects.toThrow();

    expect(h().sandbox.requests()).toMatchObject([{ op: "XMLlicenseAdd", status: "dropped" }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("dropNext leaves a refusal answered and waits for a call that commits", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    expect(bodyOf(await add(h(), { packageid: "1" }))).toMatchObject({ status: 0 });
    await expect(add(h())).rejects.toThrow();
    expect(h().sandbox.requests().map((r) => r.status)).toEqual([200, "dropped"]);
  });

  it("dropNext drops a transfer answered with status 0 that moved the licence (the page's own example)", async () => {
    await add(h());
    h().sandbox.setDialect({ transferStatus: 0 });
    h().sandbox.setFaults({ dropNext: 1 });

    await expect(h().call("XMLtransfer", { output: "json", oldip: IP, newip: NEW_IP, packageid: String(ADMIN) })).rejects.toThrow();
    expect(h().sandbox.licenses()).toMatchObject([{ ip: NEW_IP }]);
  });

  it("a held change is carried out after the hold, answered or not", async () => {
    h().sandbox.setFaults({ holdMs: 300, holdNext: 1 });
    const pending = add(h());

    await until(() => h().sandbox.requests()[0]?.held === true);
    expect(h().sandbox.ledger()).toEqual([]);
    expect(bodyOf(await pending)).toMatchObject({ status: 1 });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("reads are never dropped or held", async () => {
    h().sandbox.setFaults({ dropNext: 1, holdNext: 1, holdMs: 60_000 });

    expect((await h().call("XMLlicenseInfo", { output: "json" })).status).toBe(200);
  });

  it("the next call answers what a test asks, once", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseAdd", refuse: "Please accept the charges in Manage2." });

    expect(bodyOf(await add(h()))).toEqual({ status: 0, reason: "Please accept the charges in Manage2." });
    expect(bodyOf(await add(h()))).toMatchObject({ status: 1 });
  });

  it("an expiry told not to expire answers status 1 with result \"\" and leaves the licence active", async () => {
    await add(h());
    const licenseid = h().sandbox.licenses()[0]!.licenseid;
    h().sandbox.answerNext({ fn: "XMLlicenseExpire", notExpired: true });

    expect(bodyOf(await h().call("XMLlicenseExpire", { output: "json", liscid: String(licenseid) }))).toMatchObject({ status: 1, result: "" });
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid, status: 1 }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });
});

describe("the Manage2 sandbox's control routes", () => {
  const h = useManage2();
  const control = async (method: "GET" | "POST", path: string, body?: unknown, token: string = DEFAULT_SANDBOX_TOKENS.admin) => {
    const response = await fetch(`${h().running.url}/_sandbox${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("need the admin token", async () => {
    expect((await control("GET", "/ledger", undefined, "nope")).status).toBe(401);
  });

  it("show the ledger, the timeline and the licences, and are never recorded", async () => {
    await add(h());

    expect((await control("GET", "/ledger")).body.charges).toMatchObject([{ op: "add", licenseid: 7000001 }]);
    expect((await control("GET", "/timeline")).body.events).toMatchObject([{ event: "added", licenseid: 7000001 }]);
    expect((await control("GET", "/licenses")).body.licenses).toMatchObject([{ licenseid: 7000001, status: 1 }]);
    expect((await control("GET", "/invoice?at=2025-04-15T00:00:00.000Z")).body).toMatchObject({ on: "2025-04-15T00:00:00.000Z", total: 15 });
    expect(h().sandbox.requests()).toHaveLength(1);
  });

  it("set the dialect and the faults, naming a field they do not know", async () => {
    expect((await control("POST", "/dialect", { numbers: "strings" })).body.dialect).toMatchObject({ numbers: "strings" });
    expect(await control("POST", "/dialect", { numbers: "roman" })).toMatchObject({ status: 422, body: { errors: { numbers: [expect.any(String)] } } });
    expect((await control("POST", "/faults", { failNext: 1 })).body.faults).toMatchObject({ failNext: 1 });
  });

  it("queue the next answer, suspend a licence as cPanel would, and reset", async () => {
    await add(h());

    expect((await control("POST", "/next", { fn: "XMLlicenseExpire", refuse: "Not today" })).status).toBe(200);
    expect(bodyOf(await h().call("XMLlicenseExpire", { output: "json", liscid: "7000001" }))).toEqual({ status: 0, reason: "Not today" });
    expect((await control("POST", "/suspend", { licenseid: 7000001 })).body.license).toMatchObject({ status: 4 });
    expect((await control("POST", "/suspend", { licenseid: 1 })).status).toBe(404);
    await control("POST", "/reset");
    expect(h().sandbox.licenses()).toEqual([]);
  });
});

describe("the Manage2 sandbox's state file", () => {
  const dirs = tempDirs("lb-manage2-");
  afterEach(() => dirs.removeAll());

  it("keeps the account, the ledger and the timeline across restarts", async () => {
    const statePath = join(dirs.make(), "manage2.json");
    const first = await startManage2({ statePath });
    await add(first);
    await first.close();

    const second = await startManage2({ statePath });
    try {
      expect(second.sandbox.licenses()).toMatchObject([{ licenseid: 7000001, ip: IP }]);
      expect(second.sandbox.ledger()).toHaveLength(1);
      expect(second.sandbox.timeline()).toHaveLength(1);
      expect(bodyOf(await add(second, { ip: NEW_IP }))).toMatchObject({ licenseid: 7000002 });
    } finally {
      await second.close();
    }
  });
});
