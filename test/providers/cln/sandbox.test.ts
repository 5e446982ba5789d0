import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createClnSandbox } from "../../../src/sandbox/cln/app.js";
import {
  CLOUDLINUX,
  IMUNIFY_250,
  IMUNIFY_30,
  IMUNIFY_SINGLE,
  IP,
  KERNELCARE,
  LOGIN,
  NEW_IP,
  SECRET,
  START,
  tokenFor,
  useClnSandbox,
} from "./helpers.js";

const START_SECONDS = Date.parse(START) / 1000;

describe("CLN sandbox: the token", () => {
  const h = useClnSandbox();

  it("accepts login|timestamp|sha1(secret key + timestamp)", async () => {
    const answer = await h().raw("list", { token: tokenFor(LOGIN, SECRET, START_SECONDS) });

    expect(answer.body).toEqual({ success: true, message: "", data: [] });
  });

  it("refuses a wrong hash with success false and Not authorized, at HTTP 200, and registers nothing", async () => {
    const answer = await h().raw("register", { token: tokenFor(LOGIN, "not-the-secret", START_SECONDS), ip: IP, type: "41" });

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: false, message: "Not authorized", data: null });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("refuses an unknown login, a missing token and a malformed one", async () => {
    for (const token of [tokenFor("nobody", SECRET, START_SECONDS), "", `${LOGIN}|${START_SECONDS}`, `${LOGIN}|soon|${"0".repeat(40)}`]) {
      expect((await h().raw("list", { token })).body).toMatchObject({ success: false, message: "Not authorized" });
    }
  });

  it("takes a timestamp up to five minutes from its clock, either way, and no further", async () => {
    expect((await h().raw("list", { token: tokenFor(LOGIN, SECRET, START_SECONDS - 300) })).body).toMatchObject({ success: true });
    expect((await h().raw("list", { token: tokenFor(LOGIN, SECRET, START_SECONDS + 300) })).body).toMatchObject({ success: true });
    expect((await h().raw("list", { token: tokenFor(LOGIN, SECRET, START_SECONDS - 301) })).body).toMatchObject({ success: false });
    expect((await h().raw("list", { token: tokenFor(LOGIN, SECRET, START_SECONDS + 301) })).body).toMatchObject({ success: false });
  });

  it("keeps the token out of its request log", async () => {
    await h().raw("register", { ip: IP, type: "41" });

    expect(h().sandbox.requests()).toMatchObject([{ via: "cln", op: "register", params: { ip: IP, type: "41" }, status: 200 }]);
    expect(JSON.stringify(h().sandbox.requests())).not.toContain(LOGIN);
  });
});

describe("CLN sandbox: answers as CLN's documentation prints them", () => {
  const h = useClnSandbox();

  it("register answers {ip, type, registered, created}, created written like 2014-04-30T11:26-0400", async () => {
    const answer = await h().raw("register", { ip: IP, type: "41" });

    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body).toEqual({ success: true, message: "", data: { ip: IP, type: 41, registered: false, created: "2025-01-15T06:00-0400" } });
  });

  it("register of a licence the account holds answers that licence again and buys nothing", async () => {
    const first = await h().raw("register", { ip: IP, type: "41" });
    h().clock.advanceSeconds(120);

    const again = await h().raw("register", { ip: IP, type: "41" });

    expect(again.body).toEqual(first.body);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("list answers every licence of the account, with no expiry", async () => {
    await h().raw("register", { ip: IP, type: "1" });
    await h().raw("register", { ip: NEW_IP, type: "16" });

    expect((await h().raw("list")).body).toEqual({
      success: true,
      message: "",
      data: [
        { ip: IP, type: 1, registered: false, created: "2025-01-15T06:00-0400" },
        { ip: NEW_IP, type: 16, registered: false, created: "2025-01-15T06:00-0400" },
      ],
    });
  });

  it("check answers the types registered on the IP by anyone", async () => {
    await h().raw("register", { ip: IP, type: "16" });
    h().sandbox.holdByAnother(IP, CLOUDLINUX);

    expect((await h().raw("check", { ip: IP })).body).toEqual({ success: true, message: "", data: [1, 16] });
    expect((await h().raw("check", { ip: NEW_IP })).body).toEqual({ success: true, message: "", data: [] });
  });

  it("server answers the account's licences on comma-separated IPs, with server_info and last_checkin", async () => {
    await h().raw("register", { ip: IP, type: "1" });
    await h().raw("register", { ip: NEW_IP, type: "16" });
    await h().raw("register", { ip: "203.0.113.30", type: "16" });
    h().clock.advanceSeconds(3600);
    h().sandbox.checkIn(IP, CLOUDLINUX, "cloudlinux-release-8 (4.18.0-477.el8.x86_64)");
    h().sandbox.holdByAnother(NEW_IP, CLOUDLINUX);

    const answer = await h().raw("server", { ip: `${IP},${NEW_IP}` });

    expect(answer.body).toEqual({
      success: true,
      message: "",
      data: [
        {
          server_info: "cloudlinux-release-8 (4.18.0-477.el8.x86_64)",
          ip: IP,
          type: 1,
          registered: true,
          created: "2025-01-15T06:00-0400",
          last_checkin: "2025-01-15T07:00-0400",
        },
        { server_info: null, ip: NEW_IP, type: 16, registered: false, created: "2025-01-15T06:00-0400", last_checkin: null },
      ],
    });
  });

  it("server takes up to 100 IPs", async () => {
    const ips = (n: number) => Array.from({ length: n }, (_, i) => `198.51.100.${i + 1}`).join(",");

    expect((await h().raw("server", { ip: ips(100) })).body).toMatchObject({ success: true, data: [] });
    expect((await h().raw("server", { ip: ips(101) })).body).toEqual({ success: false, message: "Invalid call arguments: up to 100 IP addresses", data: null });
  });

  it("availability leaves out what anyone holds on the IP and lists the account's own as owned", async () => {
    await h().raw("register", { ip: IP, type: "16" });
    h().sandbox.holdByAnother(IP, CLOUDLINUX);

    const { data } = (await h().raw("availability", { ip: IP })).body as { data: { available: number[]; owned: number[] } };

    expect(data.owned).toEqual([16]);
    expect(data.available).toEqual(expect.arrayContaining([41, 42, 43, 49, 40]));
    expect(data.available).not.toContain(16);
    expect(data.available).not.toContain(1);
  });

  it("remove answers true once, then false (not found), both inside success true", async () => {
    await h().raw("register", { ip: IP, type: "41" });

    expect((await h().raw("remove", { ip: IP, type: "41" })).body).toEqual({ success: true, message: "", data: true });
    expect((await h().raw("remove", { ip: IP, type: "41" })).body).toEqual({ success: true, message: "", data: false });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("remove without a type removes every type the account holds on that IP, and only those", async () => {
    await h().raw("register", { ip: IP, type: "1" });
    await h().raw("register", { ip: IP, type: "16" });
    await h().raw("register", { ip: NEW_IP, type: "16" });
    h().sandbox.holdByAnother(IP, IMUNIFY_SINGLE);

    expect((await h().raw("remove", { ip: IP })).body).toMatchObject({ success: true, data: true });

    expect(h().sandbox.licenses().map((l) => [l.ip, l.type])).toEqual([[NEW_IP, KERNELCARE]]);
    expect((await h().raw("check", { ip: IP })).body).toMatchObject({ data: [41] });
  });

  it("remove of another customer's licence answers false and leaves it", async () => {
    h().sandbox.holdByAnother(IP, IMUNIFY_SINGLE);

    expect((await h().raw("remove", { ip: IP, type: "41" })).body).toEqual({ success: true, message: "", data: false });
    expect((await h().raw("check", { ip: IP })).body).toMatchObject({ data: [41] });
  });

  it("convert changes an Imunify licence into an Imunify360 tier in place, answering true", async () => {
    await h().raw("register", { ip: IP, type: "41" });

    expect((await h().raw("convert", { ip: IP, type: "41", type_to: "43" })).body).toEqual({ success: true, message: "", data: true });

    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, type: IMUNIFY_250, created: START }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("convert answers false for a licence the account does not hold, and refuses a type that is no Imunify one", async () => {
    expect((await h().raw("convert", { ip: IP, type: "41", type_to: "43" })).body).toEqual({ success: true, message: "", data: false });
    expect((await h().raw("convert", { ip: IP, type: "1", type_to: "43" })).body).toEqual({
      success: false,
      message: "Invalid call arguments: type must be an Imunify IP license type",
      data: null,
    });
    expect((await h().raw("convert", { ip: IP, type: "41", type_to: "40" })).body).toEqual({
      success: false,
      message: "Invalid call arguments: type_to must be an Imunify360 IP license type",
      data: null,
    });
  });

  it("refuses an invalid IP, a missing one and an unknown type, naming them", async () => {
    expect((await h().raw("register", { ip: "1.1.1.1.1", type: "41" })).body).toEqual({ success: false, message: "Invalid IP format: 1.1.1.1.1", data: null });
    expect((await h().raw("register", { type: "41" })).body).toEqual({ success: false, message: "Invalid call arguments: ip is required", data: null });
    expect((await h().raw("register", { ip: IP, type: "2" })).body).toEqual({ success: false, message: "Invalid license type: 2", data: null });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("answers an unknown operation with a 404 page", async () => {
    const answer = await h().raw("update", { ip: IP });

    expect(answer.status).toBe(404);
    expect(answer.body).toBeUndefined();
  });
});

describe("CLN sandbox: billing", () => {
  const h = useClnSandbox();

  it("records one purchase for each register that creates a licence, with its IP, type and monthly price", async () => {
    await h().raw("register", { ip: IP, type: "41" });
    await h().raw("register", { ip: IP, type: "41" });
    await h().raw("register", { ip: IP, type: "16" });

    expect(h().sandbox.ledger()).toEqual([
      { seq: expect.any(Number), at: START, op: "register", ip: IP, type: 41, price_per_month: 4 },
      { seq: expect.any(Number), at: START, op: "register", ip: IP, type: 16, price_per_month: 1.7 },
    ]);
  });

  it("bills each licence once for every month it was held in, and nothing once it is removed", async () => {
    await h().raw("register", { ip: IP, type: "41" });
    h().clock.set("2025-03-10T00:00:00.000Z");
    await h().raw("remove", { ip: IP, type: "41" });

    expect(h().sandbox.invoice("2024-12")).toEqual([]);
    expect(h().sandbox.invoice("2025-01")).toEqual([{ ip: IP, type: 41, amount: 4 }]);
    expect(h().sandbox.invoice("2025-02")).toEqual([{ ip: IP, type: 41, amount: 4 }]);
    expect(h().sandbox.invoice("2025-03")).toEqual([{ ip: IP, type: 41, amount: 4 }]);
    expect(h().sandbox.invoice("2025-04")).toEqual([]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });
});

describe("CLN sandbox: the timeline of holdings", () => {
  const h = useClnSandbox();

  it("shows a change of IP done as register-then-remove holding a licence throughout", async () => {
    await h().raw("register", { ip: IP, type: "41" });
    await h().raw("register", { ip: NEW_IP, type: "41" });
    await h().raw("remove", { ip: IP, type: "41" });

    expect(h().sandbox.timeline().map((e) => [e.event, e.ip, e.type, e.cause])).toEqual([
      ["acquired", IP, 41, "register"],
      ["acquired", NEW_IP, 41, "register"],
      ["released", IP, 41, "remove"],
    ]);
  });

  it("leaves the old licence held when the register of the new IP is refused", async () => {
    await h().raw("register", { ip: IP, type: "41" });
    h().sandbox.failNextRegister("IP address is taken");

    const refused = await h().raw("register", { ip: NEW_IP, type: "41" });

    expect(refused.body).toEqual({ success: false, message: "IP address is taken", data: null });
    expect(h().sandbox.timeline().map((e) => [e.event, e.ip])).toEqual([["acquired", IP]]);
    expect(h().sandbox.licenses().map((l) => l.ip)).toEqual([IP]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("records a convert as the new type acquired before the old one is released", async () => {
    await h().raw("register", { ip: IP, type: "41" });
    await h().raw("convert", { ip: IP, type: "41", type_to: "42" });

    expect(h().sandbox.timeline().map((e) => [e.event, e.type, e.cause])).toEqual([
      ["acquired", 41, "register"],
      ["acquired", 42, "convert"],
      ["released", 41, "convert"],
    ]);
  });

  it("refuses a type another customer holds on the IP", async () => {
    h().sandbox.holdByAnother(IP, IMUNIFY_SINGLE);

    const answer = await h().raw("register", { ip: IP, type: "41" });

    expect(answer.body).toEqual({ success: false, message: `IP license of type 41 for ${IP} is already registered by another customer`, data: null });
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("lets types of one product line share an IP unless exclusiveProducts is set", async () => {
    await h().raw("register", { ip: IP, type: "41" });
    expect((await h().raw("register", { ip: IP, type: "42" })).body).toMatchObject({ success: true });

    h().sandbox.reset();
    h().sandbox.setQuirks({ exclusiveProducts: true });
    await h().raw("register", { ip: IP, type: "41" });
    const refused = await h().raw("register", { ip: IP, type: "42" });

    expect(refused.body).toEqual({ success: false, message: `IP license of type 41 is already registered for ${IP} and excludes type 42`, data: null });
    expect((await h().raw("register", { ip: IP, type: "16" })).body).toMatchObject({ success: true });
    const { data } = (await h().raw("availability", { ip: IP })).body as { data: { available: number[] } };
    expect(data.available).not.toContain(IMUNIFY_30);
  });
});

describe("CLN sandbox: faults", () => {
  const h = useClnSandbox();

  it("failNext answers a load balancer's HTML 503 before the token is looked at, and changes nothing", async () => {
    h().sandbox.setFaults({ failNext: 1 });

    const answer = await h().raw("register", { token: "nonsense", ip: IP, type: "41" });

    expect(answer.status).toBe(503);
    expect(answer.contentType).toMatch(/^text\/html/);
    expect(answer.text).toContain("<title>503 Service Temporarily Unavailable</title>");
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("dropNext makes the register, then hangs up without an answer", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    await expect(h().raw("register", { ip: IP, type: "41" })).rejects.toThrow();

    expect(h().sandbox.licenses().map((l) => [l.ip, l.type])).toEqual([[IP, IMUNIFY_SINGLE]]);
    expect(h().sandbox.ledger()).toHaveLength(1);
    expect(h().sandbox.requests()).toMatchObject([{ op: "register", status: "dropped" }]);
  });

  it("dropNext answers what committed nothing (a refusal, a remove of nothing) and drops the next change", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    expect((await h().raw("register", { ip: "1.1.1.1.1", type: "41" })).body).toMatchObject({ success: false });
    expect((await h().raw("remove", { ip: IP, type: "41" })).body).toMatchObject({ success: true, data: false });
    expect((await h().raw("list")).body).toMatchObject({ success: true });
    await expect(h().raw("register", { ip: IP, type: "41" })).rejects.toThrow();

    expect(h().sandbox.requests().map((r) => r.status)).toEqual([200, 200, 200, "dropped"]);
  });

  it("a held register is made after the hold and recorded as held", async () => {
    h().sandbox.setFaults({ holdMs: 50, holdNext: 1 });

    const answer = await h().raw("register", { ip: IP, type: "41" });

    expect(answer.body).toMatchObject({ success: true });
    expect(h().sandbox.requests()).toMatchObject([{ op: "register", held: true, status: 200 }]);
  });
});

describe("CLN sandbox: quirks the sources leave open", () => {
  const h = useClnSandbox();

  it("writes type numbers as strings and empty lists as null when told to", async () => {
    h().sandbox.setQuirks({ typesAsStrings: true, emptyAsNull: true });
    expect((await h().raw("list")).body).toEqual({ success: true, message: "", data: null });

    await h().raw("register", { ip: IP, type: "16" });

    expect((await h().raw("list")).body).toMatchObject({ data: [{ ip: IP, type: "16" }] });
    expect((await h().raw("check", { ip: IP })).body).toMatchObject({ data: ["16"] });
  });

  it("leaves message out of successful answers, and answers refusals at another HTTP status, when told to", async () => {
    h().sandbox.setQuirks({ omitMessage: true, refusalStatus: 400 });

    expect((await h().raw("list")).body).toEqual({ success: true, data: [] });
    const refused = await h().raw("list", { token: "wrong" });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ success: false, message: "Not authorized", data: null });
  });

  it("writes times in the offset it is given", async () => {
    h().sandbox.setQuirks({ utcOffsetMinutes: 0 });

    expect((await h().raw("register", { ip: IP, type: "41" })).body).toMatchObject({ data: { created: "2025-01-15T10:00+0000" } });
  });
});

describe("CLN sandbox: control routes", () => {
  const h = useClnSandbox();

  it("answer only the admin token", async () => {
    const answer = await fetch(`${h().running.url}/_sandbox/ledger`);

    expect(answer.status).toBe(401);
  });

  it("arm the next remove's refusal: it is refused once, the licence kept, then removed", async () => {
    await h().raw("register", { ip: IP, type: "41" });
    expect((await h().control("POST", "/next-remove-failure", { message: "Try later" })).body).toEqual({ armed: true });

    expect((await h().raw("remove", { ip: IP, type: "41" })).body).toMatchObject({ success: false, message: "Try later" });
    expect((await h().control("GET", "/timeline")).body).toMatchObject({ timeline: [{ event: "acquired" }] });
    expect((await h().raw("remove", { ip: IP, type: "41" })).body).toMatchObject({ success: true, data: true });
  });

  it("arm the next register's refusal, place another customer's licence, and show ledger, timeline and invoice", async () => {
    expect((await h().control("POST", "/held-by-another", { ip: NEW_IP, type: 41 })).body).toEqual({ held: true });
    expect((await h().control("POST", "/next-register-failure", { message: "Try later" })).body).toEqual({ armed: true });
    expect((await h().raw("register", { ip: IP, type: "41" })).body).toMatchObject({ success: false, message: "Try later" });
    await h().raw("register", { ip: IP, type: "41" });

    expect((await h().control("GET", "/ledger")).body).toMatchObject({ purchases: [{ ip: IP, type: 41 }] });
    expect((await h().control("GET", "/timeline")).body).toMatchObject({ timeline: [{ event: "acquired", ip: IP, type: 41 }] });
    expect((await h().control("GET", "/invoice?month=2025-01")).body).toEqual({ month: "2025-01", lines: [{ ip: IP, type: 41, amount: 4 }] });
    expect((await h().control("GET", "/requests")).body).toMatchObject({ requests: [{ op: "register" }, { op: "register" }] });
  });

  it("name the field that is wrong", async () => {
    expect((await h().control("POST", "/held-by-another", { ip: "nowhere", type: 2 })).body).toEqual({
      message: "Validation error",
      errors: { ip: ["must be an IP address"], type: ["is not a CLN IP licence type"] },
    });
    expect((await h().control("POST", "/faults", { dropNext: -1 })).status).toBe(422);
    expect((await h().control("GET", "/invoice?month=2025-13")).status).toBe(422);
  });

  it("set faults and quirks, and reset everything", async () => {
    expect((await h().control("POST", "/faults", { failNext: 1 })).body).toMatchObject({ faults: { failNext: 1 } });
    expect((await h().control("POST", "/quirks", { typesAsStrings: true })).body).toMatchObject({ quirks: { typesAsStrings: true } });
    await h().raw("register", { ip: IP, type: "41" });

    expect((await h().control("POST", "/reset")).body).toEqual({ reset: true });

    expect((await h().control("GET", "/faults")).body).toMatchObject({ faults: { failNext: 0 } });
    expect((await h().control("GET", "/quirks")).body).toMatchObject({ quirks: { typesAsStrings: false } });
    expect(h().sandbox.requests()).toEqual([]);
  });
});

describe("CLN sandbox: state file", () => {
  it("keeps licences, ledger and timeline across a restart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cln-sandbox-"));
    const statePath = path.join(dir, "cln.json");
    const now = () => new Date(START);
    const first = createClnSandbox({ statePath, now });
    const running = await first.listen();
    await fetch(`${running.url}/api/ipl/register.json?ip=${IP}&type=16&token=${encodeURIComponent(tokenFor(LOGIN, SECRET, START_SECONDS))}`);
    await running.close();

    const second = createClnSandbox({ statePath, now });

    expect(second.licenses()).toMatchObject([{ ip: IP, type: KERNELCARE }]);
    expect(second.ledger()).toHaveLength(1);
    expect(second.timeline()).toHaveLength(1);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
