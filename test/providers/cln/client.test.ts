import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/reseller/errors.js";
import { createClnClient } from "../../../src/providers/cln/index.js";
import { json, rejection, startTinyServer } from "../../reseller/helpers.js";
import {
  CLOUDLINUX,
  IMUNIFY_250,
  IMUNIFY_30,
  IMUNIFY_AV_PLUS,
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

describe("CLN client against the sandbox", () => {
  const h = useClnSandbox();

  it("register buys the licence and answers it, its time read as an instant", async () => {
    const license = await h().client().register({ ip: IP, type: IMUNIFY_SINGLE });

    expect(license).toEqual({ ip: IP, type: 41, registered: false, created: "2025-01-15T06:00-0400", createdAt: START });
    expect(h().sandbox.ledger()).toMatchObject([{ op: "register", ip: IP, type: 41 }]);
  });

  it("register of a licence already held answers that licence and buys nothing", async () => {
    const client = h().client();
    const first = await client.register({ ip: IP, type: IMUNIFY_SINGLE });

    expect(await client.register({ ip: IP, type: IMUNIFY_SINGLE })).toEqual(first);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("register sends an IPv6 address and an IPv4-mapped one in their one spelling", async () => {
    const client = h().client();
    await client.register({ ip: "2001:DB8:0:0::1", type: KERNELCARE });
    await client.register({ ip: "::ffff:203.0.113.10", type: KERNELCARE });

    expect(h().sandbox.requests().map((r) => r.params.ip)).toEqual(["2001:db8::1", IP]);
  });

  it("remove answers removed true, then false for a licence no longer held", async () => {
    const client = h().client();
    await client.register({ ip: IP, type: IMUNIFY_SINGLE });

    expect(await client.remove({ ip: IP, type: IMUNIFY_SINGLE })).toEqual({ removed: true });
    expect(await client.remove({ ip: IP, type: IMUNIFY_SINGLE })).toEqual({ removed: false });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("remove of another customer's licence is removed false, not an error, and leaves it", async () => {
    h().sandbox.holdByAnother(IP, IMUNIFY_SINGLE);

    expect(await h().client().remove({ ip: IP, type: IMUNIFY_SINGLE })).toEqual({ removed: false });
    expect(await h().client().check({ ip: IP })).toEqual([IMUNIFY_SINGLE]);
  });

  it("removeAllTypes sends no type and removes every type the account holds on the IP", async () => {
    const client = h().client();
    await client.register({ ip: IP, type: CLOUDLINUX });
    await client.register({ ip: IP, type: KERNELCARE });

    expect(await client.removeAllTypes({ ip: IP })).toEqual({ removed: true });

    expect(h().sandbox.requests().at(-1)?.params).toEqual({ ip: IP });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("list reads every licence of the account", async () => {
    const client = h().client();
    await client.register({ ip: IP, type: CLOUDLINUX });
    await client.register({ ip: NEW_IP, type: KERNELCARE });
    h().sandbox.checkIn(IP, CLOUDLINUX);

    expect(await client.list()).toEqual([
      { ip: IP, type: 1, registered: true, created: "2025-01-15T06:00-0400", createdAt: START },
      { ip: NEW_IP, type: 16, registered: false, created: "2025-01-15T06:00-0400", createdAt: START },
    ]);
  });

  it("list, check, server and availability read type numbers written as strings and empty lists written as null", async () => {
    h().sandbox.setQuirks({ typesAsStrings: true, emptyAsNull: true, omitMessage: true });
    const client = h().client();
    expect(await client.list()).toEqual([]);
    expect(await client.server({ ips: [IP] })).toEqual([]);

    await client.register({ ip: IP, type: KERNELCARE });

    expect((await client.list()).map((l) => l.type)).toEqual([16]);
    expect(await client.check({ ip: IP })).toEqual([16]);
    expect((await client.server({ ips: [IP] })).map((l) => l.type)).toEqual([16]);
    expect((await client.availability({ ip: IP })).owned).toEqual([16]);
  });

  it("check reads the types on the IP, whoever holds them", async () => {
    await h().client().register({ ip: IP, type: KERNELCARE });
    h().sandbox.holdByAnother(IP, CLOUDLINUX);

    expect(await h().client().check({ ip: IP })).toEqual([1, 16]);
  });

  it("server reads the account's licences on several IPs, with the server that checked in and when", async () => {
    const client = h().client();
    await client.register({ ip: IP, type: CLOUDLINUX });
    await client.register({ ip: NEW_IP, type: KERNELCARE });
    h().clock.advanceSeconds(90);
    h().sandbox.checkIn(IP, CLOUDLINUX, "cloudlinux-release-8");

    expect(await client.server({ ips: [IP, NEW_IP, IP] })).toEqual([
      { ip: IP, type: 1, registered: true, created: "2025-01-15T06:00-0400", createdAt: START, serverInfo: "cloudlinux-release-8", lastCheckin: "2025-01-15T06:01-0400" },
      { ip: NEW_IP, type: 16, registered: false, created: "2025-01-15T06:00-0400", createdAt: START, serverInfo: null, lastCheckin: null },
    ]);
    expect(h().sandbox.requests().at(-1)?.params).toEqual({ ip: `${IP},${NEW_IP}` });
  });

  it("find answers the account's licence of that type on that IP, or nothing", async () => {
    const client = h().client();
    await client.register({ ip: IP, type: KERNELCARE });
    h().sandbox.holdByAnother(IP, CLOUDLINUX);

    expect(await client.find({ ip: IP, type: KERNELCARE })).toMatchObject({ ip: IP, type: 16 });
    expect(await client.find({ ip: IP, type: CLOUDLINUX })).toBeUndefined();
    expect(await client.find({ ip: NEW_IP, type: KERNELCARE })).toBeUndefined();
  });

  it("availability reads what can still be registered and what the account owns", async () => {
    await h().client().register({ ip: IP, type: KERNELCARE });

    const availability = await h().client().availability({ ip: IP });

    expect(availability.owned).toEqual([16]);
    expect(availability.available).toEqual(expect.arrayContaining([1, 40, 41, 42, 43, 49]));
    expect(availability.available).not.toContain(16);
  });

  it("convert changes an Imunify licence into another Imunify360 tier: converted true", async () => {
    const client = h().client();
    await client.register({ ip: IP, type: IMUNIFY_SINGLE });

    expect(await client.convert({ ip: IP, type: IMUNIFY_SINGLE, typeTo: IMUNIFY_250 })).toEqual({ converted: true });

    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, type: 43 }]);
    expect(h().sandbox.requests().at(-1)?.params).toEqual({ ip: IP, type: "41", type_to: "43" });
  });

  it("convert of a licence not held is converted false, and nothing changes", async () => {
    expect(await h().client().convert({ ip: IP, type: IMUNIFY_AV_PLUS, typeTo: IMUNIFY_30 })).toEqual({ converted: false });
    expect(h().sandbox.licenses()).toEqual([]);
  });
});

describe("CLN client: what it sends", () => {
  it("calls GET /api/ipl/<operation>.json with the parameters and a token of login|timestamp|sha1(secret key + timestamp) from its clock", async () => {
    const server = await startTinyServer((_req, res) => json(res, 200, { success: true, message: "", data: [] }));
    const clock = { now: () => Date.parse(START) + 999 };
    const client = createClnClient({ baseUrl: `${server.url}/`, login: LOGIN, secretKey: SECRET, clock });
    try {
      await client.check({ ip: IP });

      const seen = new URL(server.requests[0]!.url, server.url);
      expect(server.requests[0]?.method).toBe("GET");
      expect(seen.pathname).toBe("/api/ipl/check.json");
      expect(seen.searchParams.get("ip")).toBe(IP);
      expect(seen.searchParams.get("token")).toBe(tokenFor(LOGIN, SECRET, Date.parse(START) / 1000));
      expect(server.requests[0]?.body).toBe("");
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("makes a new token for every call, from the time of that call", async () => {
    const server = await startTinyServer((_req, res) => json(res, 200, { success: true, data: [] }));
    let now = Date.parse(START);
    const client = createClnClient({ baseUrl: server.url, login: LOGIN, secretKey: SECRET, clock: { now: () => now } });
    try {
      await client.list();
      now += 61_000;
      await client.list();

      const tokens = server.requests.map((r) => new URL(r.url, server.url).searchParams.get("token"));
      expect(tokens).toEqual([tokenFor(LOGIN, SECRET, Date.parse(START) / 1000), tokenFor(LOGIN, SECRET, Date.parse(START) / 1000 + 61)]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("refuses an empty login or secret key, and a login holding the token's separator", () => {
    expect(() => createClnClient({ login: " ", secretKey: SECRET })).toThrow("cln: login is empty");
    expect(() => createClnClient({ login: "a|b", secretKey: SECRET })).toThrow("cln: login must not contain |");
    expect(() => createClnClient({ login: LOGIN, secretKey: "" })).toThrow("cln: secret key is empty");
  });
});

describe("CLN client: input is checked before anything is sent", () => {
  const h = useClnSandbox();

  it("an invalid IP is a ValidationError naming ip, not sent", async () => {
    const error = await rejection(h().client().register({ ip: "1.1.1.1.1", type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ operation: "cln.register", errors: { ip: ["must be an IPv4 or IPv6 address"] }, mayHaveTakenEffect: false });
    expect(h().sandbox.requests()).toEqual([]);
  });

  it("a type that is not in CLN's list is a ValidationError naming type, not sent", async () => {
    const error = await rejection(h().client().register({ ip: IP, type: 2 }));

    expect(error).toMatchObject({ operation: "cln.register", errors: { type: ["is not a CLN IP licence type (see CLN_TYPES)"] } });
    expect(h().sandbox.requests()).toEqual([]);
  });

  it("a convert into a type that is no Imunify360 tier is a ValidationError naming typeTo, not sent", async () => {
    for (const typeTo of [IMUNIFY_AV_PLUS, CLOUDLINUX, IMUNIFY_SINGLE]) {
      const error = await rejection(h().client().convert({ ip: IP, type: IMUNIFY_SINGLE, typeTo }));
      expect(error).toMatchObject({ operation: "cln.convert", errors: { typeTo: [expect.stringContaining("Imunify360")] } });
    }
    expect(h().sandbox.requests()).toEqual([]);
  });

  it("server takes one to a hundred IPs", async () => {
    const ips = Array.from({ length: 101 }, (_, i) => `198.51.100.${i + 1}`);

    expect(await rejection(h().client().server({ ips: [] }))).toMatchObject({ errors: { ips: ["must name at least one IP"] } });
    expect(await rejection(h().client().server({ ips }))).toMatchObject({ errors: { ips: ["takes up to 100 IPs (CLN's limit)"] } });
    expect(h().sandbox.requests()).toEqual([]);
  });
});
