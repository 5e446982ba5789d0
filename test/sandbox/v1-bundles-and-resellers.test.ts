import { describe, expect, it } from "vitest";
import { ADMIN, dataOf, IP, register, RESELLER, START, useSandbox } from "./helpers.js";

describe("v1 bundles", () => {
  const h = useSandbox();
  const registerBundle = (bundle = "cpanel-cloudlinux", billingcycle = 1) =>
    h().v1("POST", "/bundles", { body: { ip: IP, bundle, billingcycle } });

  it("registers a bundle: its licences plus cpanel's companions, tagged with the bundle key", async () => {
    const answer = await registerBundle("cpanel-cloudlinux", 12);

    expect(answer.status).toBe(200);
    const data = dataOf<{ bundle_key: string; licenses: { type: string; bundle_key: string }[] }>(answer);
    expect(data).toMatchObject({
      bundle_key: expect.stringMatching(/^BK-/),
      bundle: "cpanel-cloudlinux",
      ip: IP,
      expires_at: "2026-01-15T10:00:00.000Z",
    });
    expect(data.licenses.map((l) => l.type)).toEqual(["cpanel", "softaculous", "sitepad", "ssl", "cloudlinux"]);
    expect(h().sandbox.licenses().every((l) => l.bundle_key === data.bundle_key)).toBe(true);
  });

  it("charges the bundle price once, not the component prices", async () => {
    await registerBundle("cpanel-litespeed", 3);

    expect(h().sandbox.ledger()).toEqual([
      { seq: 1, at: START, via: "v1", op: "bundle", ip: IP, type: "cpanel-litespeed", months: 3, amount: 66, balance_after: 934 },
    ]);
  });

  it("reports a bundle's status by key", async () => {
    const key = dataOf<{ bundle_key: string }>(await registerBundle("cpanel-imunify360")).bundle_key;

    const answer = await h().v1("POST", "/bundles/status", { body: { bundle_key: key } });

    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toEqual({
      bundle_key: key,
      bundle: "cpanel-imunify360",
      ip: IP,
      status: "active",
      expires_at: "2025-02-15T10:00:00.000Z",
    });
  });

  it("a bundle with a suspended component is suspended", async () => {
    const key = dataOf<{ bundle_key: string }>(await registerBundle()).bundle_key;
    await h().v1("POST", "/license/suspend", { body: { ip: IP, type: "cloudlinux" } });

    const answer = await h().v1("POST", "/bundles/status", { body: { bundle_key: key } });

    expect(dataOf(answer)).toMatchObject({ status: "suspended" });
  });

  it("refuses an unknown bundle", async () => {
    const answer = await registerBundle("everything");

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ message: "Validation error", errors: { bundle: ["The selected bundle is invalid."] } });
  });

  it("refuses a bundle whose component already exists at the IP, charging nothing", async () => {
    await register(h(), IP, "cloudlinux");

    const answer = await registerBundle();

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ message: "Validation error", errors: { ip: ["License already exists"] } });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("refuses a bundle the balance cannot pay for", async () => {
    h().sandbox.setBalance(24);

    const answer = await registerBundle();

    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: "Insufficient balance" });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("an unknown bundle key is 404", async () => {
    const answer = await h().v1("POST", "/bundles/status", { body: { bundle_key: "BK-NOPE" } });

    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ success: false, error: "Not found" });
  });
});

const ALICE = { name: "Alice", email: "alice@example.com", password: "correct horse", role: "sub_reseller", commission_rate: 10 };

describe("v1 sub-resellers", () => {
  const h = useSandbox();
  const create = (body: object = ALICE) => h().v1("POST", "/sub-reseller", { body });

  it("creates a sub-reseller and never answers the password", async () => {
    const answer = await create();

    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toEqual({ id: 2, name: "Alice", email: "alice@example.com", role: "sub_reseller", commission_rate: 10, balance: 0 });
    expect(answer.text).not.toContain("correct horse");
  });

  it("lists the caller's sub-resellers", async () => {
    await create();

    const answer = await h().v1("GET", "/sub-reseller");

    expect(answer.status).toBe(200);
    expect(dataOf<{ email: string }[]>(answer).map((s) => s.email)).toEqual(["alice@example.com"]);
  });

  it("credit moves money from the reseller's balance to the sub-reseller's", async () => {
    const id = dataOf<{ id: number }>(await create()).id;

    const answer = await h().v1("POST", `/sub-reseller/${id}/credit`, { body: { amount: 40 } });

    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toMatchObject({ id, balance: 40 });
    expect(h().sandbox.balance()).toBe(960);
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("refuses a credit larger than the reseller's balance", async () => {
    const id = dataOf<{ id: number }>(await create()).id;

    const answer = await h().v1("POST", `/sub-reseller/${id}/credit`, { body: { amount: 1000.01 } });

    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: "Insufficient balance" });
    expect(h().sandbox.balance()).toBe(1000);
  });

  it("names each invalid field of a create", async () => {
    const answer = await create({ name: " ", email: "nope", password: "1234567", role: "reseller", commission_rate: -1 });

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      message: "Validation error",
      errors: {
        name: ["The name must be a string."],
        email: ["The email must be a valid email address."],
        password: ["The password must be at least 8 characters."],
        role: ["The selected role is invalid."],
        commission_rate: ["The commission_rate must be between 0 and 100."],
      },
    });
  });

  it("refuses an e-mail address that is already taken", async () => {
    await create();

    const answer = await create();

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ message: "Validation error", errors: { email: ["The email has already been taken."] } });
  });

  it("crediting an unknown sub-reseller is 404", async () => {
    const answer = await h().v1("POST", "/sub-reseller/42/credit", { body: { amount: 1 } });

    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ success: false, error: "Not found" });
  });
});

const BOB = {
  name: "Bob",
  email: "bob@example.com",
  password: "longenough",
  role: "reseller",
  balance: 50,
  domain: "bob.example",
  commission: 5,
};

describe("v1 admin endpoints", () => {
  const h = useSandbox();
  const createReseller = (body: object = BOB, token = ADMIN) => h().v1("POST", "/admin/reseller", { body, token });

  it("the admin creates a reseller and gets its token", async () => {
    const answer = await createReseller();

    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toEqual({
      id: 2,
      name: "Bob",
      email: "bob@example.com",
      role: "reseller",
      balance: 50,
      domain: "bob.example",
      commission: 5,
      token: expect.any(String),
    });
    expect(answer.text).not.toContain("longenough");
  });

  it("a created reseller's token works as a v1 bearer for its own licences and balance", async () => {
    const bob = dataOf<{ id: number; token: string }>(await createReseller());

    const registered = await h().v1("POST", "/license/register", { token: bob.token, body: { ip: IP, type: "cpanel", billingcycle: 1 } });
    expect(registered.status).toBe(200);

    const ownList = dataOf<unknown[]>(await h().v1("GET", "/license/list", { token: bob.token }));
    expect(ownList).toHaveLength(4);
    expect(h().sandbox.licenses()).toEqual([]);
    expect(h().sandbox.balance()).toBe(1000);

    const balance = await h().v1("GET", `/admin/reseller/${bob.id}/balance`, { token: ADMIN });
    expect(dataOf(balance)).toEqual({ id: bob.id, balance: 35 });
  });

  it("reads a reseller's balance", async () => {
    const answer = await h().v1("GET", "/admin/reseller/1/balance", { token: ADMIN });

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, data: { id: 1, balance: 1000 } });
  });

  it("credits a reseller's balance", async () => {
    const answer = await h().v1("POST", "/admin/reseller/1/credit", { token: ADMIN, body: { amount: 25.5, description: "top-up" } });

    expect(answer.status).toBe(200);
    expect(dataOf(answer)).toEqual({ id: 1, balance: 1025.5 });
    expect(h().sandbox.balance()).toBe(1025.5);
  });

  it("an unknown reseller id is 404 for balance and credit", async () => {
    const balance = await h().v1("GET", "/admin/reseller/99/balance", { token: ADMIN });
    const credit = await h().v1("POST", "/admin/reseller/99/credit", { token: ADMIN, body: { amount: 1, description: "x" } });

    expect([balance.status, credit.status]).toEqual([404, 404]);
    expect(balance.body).toEqual({ success: false, error: "Not found" });
    expect(credit.body).toEqual({ success: false, error: "Not found" });
  });

  it("names each invalid field of a reseller create", async () => {
    const answer = await createReseller({ email: "bob@", password: "x", role: "sub_reseller", balance: -1, commission: "5" });

    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      message: "Validation error",
      errors: {
        name: ["The name field is required."],
        email: ["The email must be a valid email address."],
        password: ["The password must be at least 8 characters."],
        role: ["The selected role is invalid."],
        balance: ["The balance must be at least 0."],
        domain: ["The domain field is required."],
        commission: ["The commission must be a number."],
      },
    });
  });

  it("refuses a credit that is not positive", async () => {
    const answer = await h().v1("POST", "/admin/reseller/1/credit", { token: ADMIN, body: { amount: -5 } });

    expect(answer.body).toEqual({ message: "Validation error", errors: { amount: ["The amount must be greater than 0."] } });
  });

  it("the reseller token is forbidden on admin endpoints and changes nothing", async () => {
    const answer = await createReseller(BOB, RESELLER);

    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ success: false, error: "Forbidden" });
    const again = await createReseller();
    expect(dataOf(again)).toMatchObject({ id: 2 });
  });

  it("a created reseller's token is forbidden on admin endpoints too", async () => {
    const bob = dataOf<{ token: string }>(await createReseller());

    const answer = await h().v1("GET", "/admin/reseller/1/balance", { token: bob.token });

    expect(answer.status).toBe(403);
  });
});
