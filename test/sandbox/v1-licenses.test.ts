import { describe, expect, it } from "vitest";
import { dataOf, IP, OTHER_IP, register, START, useSandbox } from "./helpers.js";

describe("v1 licence operations", () => {
  const h = useSandbox();

  it("registers a licence, answers the record and charges price times months", async () => {
    const answer = await register(h(), IP, "litespeed", 3);

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: expect.any(String) });
    expect(dataOf(answer)).toEqual({
      ip: IP,
      type: "litespeed",
      status: "active",
      variant: "litespeed",
      billingcycle: 3,
      created_at: START,
      expires_at: "2025-04-15T10:00:00.000Z",
      key: expect.stringMatching(/^LB-/),
    });
    expect(h().sandbox.balance()).toBe(1000 - 30);
    expect(h().sandbox.ledger()).toEqual([
      { seq: 1, at: START, via: "v1", op: "register", ip: IP, type: "litespeed", months: 3, amount: 30, balance_after: 970 },
    ]);
  });

  it("lists the caller's licences", async () => {
    await register(h(), IP, "plesk");
    await register(h(), OTHER_IP, "imunify360");

    const answer = await h().v1("GET", "/license/list");

    expect(answer.status).toBe(200);
    expect(dataOf<{ ip: string; type: string }[]>(answer).map((l) => [l.ip, l.type])).toEqual([
      [IP, "plesk"],
      [OTHER_IP, "imunify360"],
    ]);
  });

  it("renews an active licence from its expiry, so early renewal loses no days", async () => {
    await register(h(), IP, "plesk", 1);
    h().clock.set("2025-02-01T00:00:00.000Z");

    const answer = await h().v1("POST", "/license/renew", { body: { ip: IP, type: "plesk", billingcycle: 12 } });

    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toMatchObject({ expires_at: "2026-02-15T10:00:00.000Z", billingcycle: 12 });
    expect(h().sandbox.ledger().map((c) => [c.op, c.amount])).toEqual([
      ["register", 12],
      ["renew", 144],
    ]);
    expect(h().sandbox.balance()).toBe(1000 - 12 - 144);
  });

  it("renews a lapsed licence from now", async () => {
    await register(h(), IP, "plesk", 1);
    h().clock.set("2025-06-30T00:00:00.000Z");

    const answer = await h().v1("POST", "/license/renew", { body: { ip: IP, type: "plesk", billingcycle: 1 } });

    expect(dataOf(answer)).toMatchObject({ expires_at: "2025-07-30T00:00:00.000Z" });
  });

  it("adds calendar months, clamping to the end of a shorter month", async () => {
    h().clock.set("2025-01-31T12:00:00.000Z");

    const answer = await register(h(), IP, "plesk", 1);

    expect(dataOf(answer)).toMatchObject({ expires_at: "2025-02-28T12:00:00.000Z" });
  });

  it("suspends and unsuspends a licence without charging", async () => {
    await register(h(), IP, "plesk");

    const suspended = await h().v1("POST", "/license/suspend", { body: { ip: IP, type: "plesk" } });
    expect(suspended.status).toBe(200);
    expect(dataOf(suspended)).toMatchObject({ status: "suspended" });

    const unsuspended = await h().v1("POST", "/license/unsuspend", { body: { ip: IP, type: "plesk" } });
    expect(unsuspended.status).toBe(200);
    expect(dataOf(unsuspended)).toMatchObject({ status: "active" });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("moves a licence to a new IP without charging", async () => {
    await register(h(), IP, "plesk");

    const answer = await h().v1("POST", "/license/change-ip", { body: { ip: IP, newip: OTHER_IP, type: "plesk" } });

    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toMatchObject({ ip: OTHER_IP, type: "plesk" });
    expect(h().sandbox.licenses().map((l) => l.ip)).toEqual([OTHER_IP]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("answers an install command naming the type, IP and licence key", async () => {
    const key = dataOf<{ key: string }>(await register(h(), IP, "cpanel")).key;

    const answer = await h().v1("GET", `/license/install-command?ip=${IP}&type=cpanel`);

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      message: expect.any(String),
      data: { command: `bash <(curl -fsSL https://sandbox.invalid/install/cpanel.sh) --ip ${IP} --key ${key}` },
    });
  });

  it("accepts IPv6 addresses", async () => {
    const answer = await register(h(), "2001:db8::10", "plesk");

    expect(answer.status).toBe(200);
  });
});

const COMPANIONS = ["softaculous", "sitepad", "ssl"];

describe("free cpanel companions", () => {
  const h = useSandbox();
  const atIp = (ip: string) => h().sandbox.licenses().filter((l) => l.ip === ip);

  it("registering cpanel creates free softaculous, sitepad and ssl licences at that IP", async () => {
    await register(h(), IP, "cpanel", 3);

    const companions = h().sandbox.licenses().filter((l) => l.free);
    expect(companions.map((l) => l.type)).toEqual(COMPANIONS);
    for (const companion of companions) {
      expect(companion).toMatchObject({
        ip: IP,
        status: "active",
        free: true,
        parent: "cpanel",
        created_at: START,
        expires_at: "2025-04-15T10:00:00.000Z",
      });
    }
  });

  it("charges only for cpanel", async () => {
    await register(h(), IP, "cpanel", 1);

    expect(h().sandbox.ledger().map((c) => [c.type, c.amount])).toEqual([["cpanel", 15]]);
    expect(h().sandbox.balance()).toBe(985);
  });

  it("the list shows the companions", async () => {
    await register(h(), IP, "cpanel");

    const listed = dataOf<{ type: string }[]>(await h().v1("GET", "/license/list"));

    expect(listed.map((l) => l.type)).toEqual(["cpanel", ...COMPANIONS]);
  });

  it("companions follow the cpanel licence's renewal", async () => {
    await register(h(), IP, "cpanel", 1);

    await h().v1("POST", "/license/renew", { body: { ip: IP, type: "cpanel", billingcycle: 6 } });

    expect(atIp(IP).map((l) => l.expires_at)).toEqual(Array(4).fill("2025-08-15T10:00:00.000Z"));
  });

  it("companions follow the cpanel licence to its new IP", async () => {
    await register(h(), IP, "cpanel");

    await h().v1("POST", "/license/change-ip", { body: { ip: IP, newip: OTHER_IP, type: "cpanel" } });

    expect(atIp(IP)).toEqual([]);
    expect(atIp(OTHER_IP).map((l) => l.type)).toEqual(["cpanel", ...COMPANIONS]);
  });

  it("companions follow the cpanel licence's suspension and unsuspension", async () => {
    await register(h(), IP, "cpanel");

    await h().v1("POST", "/license/suspend", { body: { ip: IP, type: "cpanel" } });
    expect(atIp(IP).map((l) => l.status)).toEqual(Array(4).fill("suspended"));

    await h().v1("POST", "/license/unsuspend", { body: { ip: IP, type: "cpanel" } });
    expect(atIp(IP).map((l) => l.status)).toEqual(Array(4).fill("active"));
  });

  it("a separate register of a companion at that IP is refused as already existing", async () => {
    await register(h(), IP, "cpanel");

    const answer = await register(h(), IP, "softaculous");

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ message: "Validation error", errors: { ip: ["License already exists"] } });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("a companion cannot be renewed on its own", async () => {
    await register(h(), IP, "cpanel");

    const answer = await h().v1("POST", "/license/renew", { body: { ip: IP, type: "sitepad", billingcycle: 1 } });

    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ errors: { type: [expect.any(String)] } });
  });

  it("a paid softaculous already at the IP is kept instead of adding a free one", async () => {
    await register(h(), IP, "softaculous");

    await register(h(), IP, "cpanel");

    const softaculous = atIp(IP).filter((l) => l.type === "softaculous");
    expect(softaculous).toHaveLength(1);
    expect(softaculous[0]?.free).toBeUndefined();
  });
});

describe("v1 change-core", () => {
  const h = useSandbox();
  const changeCore = (old_type: string, new_type: string) =>
    h().v1("POST", "/license/change-core", { body: { ip: IP, old_type, new_type } });

  it("a new litespeed licence starts as the 2-core variant", async () => {
    expect(dataOf(await register(h(), IP, "litespeed"))).toMatchObject({ variant: "litespeed" });
  });

  it("moves a litespeed licence through the variants without charging", async () => {
    await register(h(), IP, "litespeed");

    const answer = await changeCore("litespeed", "litespeed8");
    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toMatchObject({ type: "litespeed", variant: "litespeed8" });

    expect((await changeCore("litespeed8", "litespeedX")).status).toBe(200);
    expect(h().sandbox.licenses()[0]?.variant).toBe("litespeedX");
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("refuses an old_type that is not the current variant", async () => {
    await register(h(), IP, "litespeed");

    const answer = await changeCore("litespeed4", "litespeed8");

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ message: "Validation error", errors: { old_type: ["does not match the current variant"] } });
    expect(h().sandbox.licenses()[0]?.variant).toBe("litespeed");
  });

  it("refuses types that are not litespeed variants", async () => {
    await register(h(), IP, "litespeed");

    const answer = await changeCore("cpanel", "litespeed16");

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      message: "Validation error",
      errors: { old_type: ["The selected old_type is invalid."], new_type: ["The selected new_type is invalid."] },
    });
  });

  it("is 404 when the IP has no litespeed licence", async () => {
    await register(h(), IP, "cpanel");

    const answer = await changeCore("litespeed", "litespeed4");

    expect(answer.status).toBe(404);
  });
});
