import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type RunningSandbox, type Sandbox } from "../../src/sandbox/app.js";
import {
  AlreadyExistsError,
  ForbiddenError,
  InsufficientBalanceError,
  NotFoundError,
  UnauthorizedError,
  UpstreamUnavailableError,
  ValidationError,
} from "../../src/reseller/errors.js";
import { createV1Client, type V1Client } from "../../src/reseller/v1.js";
import { QUICK_RETRY, rejection } from "./helpers.js";

let sandbox: Sandbox;
let running: RunningSandbox;
let client: V1Client;
let admin: V1Client;
const IP = "203.0.113.10";

beforeAll(async () => {
  sandbox = createSandbox();
  running = await sandbox.listen(0);
  client = createV1Client({ baseUrl: running.apiUrl, token: "sandbox-reseller-token", retry: QUICK_RETRY });
  admin = createV1Client({ baseUrl: running.apiUrl, token: "sandbox-admin-token", retry: QUICK_RETRY });
});
afterAll(() => running.close());
beforeEach(() => sandbox.reset());

describe("v1 against the sandbox: licences", () => {
  it("register buys a licence and tells when it expires", async () => {
    const answer = await client.register({ ip: IP, type: "cpanel", billingcycle: 12 });
    expect(Date.parse(answer.expires_at ?? "")).toBeGreaterThan(Date.now());
    expect(sandbox.ledger()).toMatchObject([{ op: "register", ip: IP, type: "cpanel", months: 12 }]);
  });

  it("the licence list shows the licence and its free companions", async () => {
    await client.register({ ip: IP, type: "cpanel", billingcycle: 1 });
    const licenses = await client.listLicenses();
    expect(licenses.map((l) => l.type).sort()).toEqual(["cpanel", "sitepad", "softaculous", "ssl"]);
    const cpanel = licenses.find((l) => l.type === "cpanel");
    expect(cpanel).toMatchObject({ ip: IP, status: "active", billingcycle: 1 });
    expect(licenses.find((l) => l.type === "ssl")).toMatchObject({ free: true, parent: "cpanel" });
  });

  it("install command is a string", async () => {
    await client.register({ ip: IP, type: "cpanel", billingcycle: 1 });
    const { command } = await client.installCommand({ ip: IP, type: "cpanel" });
    expect(command).toContain(IP);
  });

  it("renew extends the term", async () => {
    const first = await client.register({ ip: IP, type: "cpanel", billingcycle: 1 });
    const renewed = await client.renew({ ip: IP, type: "cpanel", billingcycle: 3 });
    expect(Date.parse(renewed.expires_at ?? "")).toBeGreaterThan(Date.parse(first.expires_at ?? ""));
    expect(sandbox.ledger().map((c) => c.op)).toEqual(["register", "renew"]);
  });

  it("suspend and unsuspend change the status", async () => {
    await client.register({ ip: IP, type: "plesk", billingcycle: 1 });
    await client.suspend({ ip: IP, type: "plesk" });
    expect((await client.listLicenses())[0]?.status).toBe("suspended");
    const answer = await client.unsuspend({ ip: IP, type: "plesk" });
    expect(answer.raw).toMatchObject({ success: true });
    expect((await client.listLicenses())[0]?.status).toBe("active");
  });

  it("changeIp moves the licence", async () => {
    await client.register({ ip: IP, type: "plesk", billingcycle: 1 });
    await client.changeIp({ ip: IP, newip: "203.0.113.99", type: "plesk" });
    expect((await client.listLicenses()).map((l) => l.ip)).toEqual(["203.0.113.99"]);
  });

  it("changeCore moves a litespeed licence to another variant", async () => {
    await client.register({ ip: IP, type: "litespeed", billingcycle: 1 });
    await client.changeCore({ ip: IP, old_type: "litespeed", new_type: "litespeed4" });
    expect((await client.listLicenses())[0]).toMatchObject({ type: "litespeed", variant: "litespeed4" });
  });
});

describe("v1 against the sandbox: bundles, sub-resellers, admin", () => {
  it("registerBundle answers a key that bundleStatus knows", async () => {
    const bundle = await client.registerBundle({ ip: IP, bundle: "cpanel-cloudlinux", billingcycle: 1 });
    expect(bundle.bundle_key).toMatch(/^BK-/);
    expect(bundle.expires_at).toBeDefined();
    const status = await client.bundleStatus({ bundle_key: bundle.bundle_key });
    expect(status).toMatchObject({ status: "active", expires_at: bundle.expires_at });
  });

  it("sub-resellers can be created, listed and credited", async () => {
    const created = await client.createSubReseller({ name: "Ann", email: "ann@example.com", password: "s3cret-pass", commission_rate: 10 });
    expect(created.id).toBeDefined();
    expect(JSON.stringify(created.raw)).not.toContain("s3cret-pass");
    const list = await client.listSubResellers();
    expect(list).toMatchObject([{ id: created.id, name: "Ann", email: "ann@example.com", role: "sub_reseller", commission_rate: 10 }]);
    const credited = await client.creditSubReseller(created.id ?? "", { amount: 25 });
    expect(credited.balance).toBe(25);
    expect(sandbox.balance()).toBe(975);
  });

  it("an admin creates a reseller whose token works, reads and credits its balance", async () => {
    const created = await admin.createReseller({
      name: "Bob",
      email: "bob@example.com",
      password: "pw-123456",
      balance: 50,
      domain: "bob.example",
      commission: 5,
    });
    expect(created.id).toBeDefined();
    expect(created.token).toMatch(/^sandbox-reseller-/);
    expect(JSON.stringify(created.raw)).not.toContain(created.token);
    const id = created.id ?? "";
    expect((await admin.resellerBalance(id)).balance).toBe(50);
    expect((await admin.creditReseller(id, { amount: 20, description: "top-up" })).balance).toBe(70);
    const bob = createV1Client({ baseUrl: running.apiUrl, token: created.token ?? "" });
    expect(await bob.listLicenses()).toEqual([]);
  });
});

describe("v1 against the sandbox: every error kind", () => {
  it("a wrong token is unauthorized", async () => {
    const stranger = createV1Client({ baseUrl: running.apiUrl, token: "not-a-token" });
    const error = await rejection(stranger.listLicenses());
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ status: 401, retryable: false, mayHaveTakenEffect: false });
  });

  it("an empty balance is insufficient balance, and nothing is charged", async () => {
    sandbox.setBalance(0);
    const error = await rejection(client.register({ ip: IP, type: "cpanel", billingcycle: 1 }));
    expect(error).toBeInstanceOf(InsufficientBalanceError);
    expect(error).toMatchObject({ status: 400, retryable: false, mayHaveTakenEffect: false });
    expect(sandbox.ledger()).toEqual([]);
  });

  it("renewing a licence that does not exist is not found", async () => {
    const error = await rejection(client.renew({ ip: IP, type: "cpanel", billingcycle: 1 }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404 });
  });

  it("a refusal about one field is a validation error naming it", async () => {
    await client.register({ ip: IP, type: "litespeed", billingcycle: 1 });
    const error = await rejection(client.changeCore({ ip: IP, old_type: "litespeed8", new_type: "litespeed4" }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 422, mayHaveTakenEffect: false });
    expect(Object.keys((error as ValidationError).errors)).toEqual(["old_type"]);
  });

  it("registering twice is already exists, charged once", async () => {
    await client.register({ ip: IP, type: "cpanel", billingcycle: 1 });
    const error = await rejection(client.register({ ip: IP, type: "cpanel", billingcycle: 1 }));
    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect(error).toMatchObject({ status: 422, mayHaveTakenEffect: false });
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("an admin call with a reseller token is forbidden", async () => {
    const error = await rejection(client.resellerBalance(1));
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ status: 403 });
  });

  it("a 503 on a register is unavailable, maybe applied, sent once", async () => {
    sandbox.setFaults({ failNext: 1 });
    const error = await rejection(client.register({ ip: IP, type: "cpanel", billingcycle: 1 }));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ status: 503, retryable: true, mayHaveTakenEffect: true });
    expect(sandbox.requests()).toHaveLength(1);
  });

  it("a 503 on a read is retried and the read succeeds", async () => {
    sandbox.setFaults({ failNext: 2 });
    expect(await client.listLicenses()).toEqual([]);
    expect(sandbox.requests().map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it("a register whose answer is lost after commit may have taken effect, and it did", async () => {
    sandbox.setFaults({ dropNext: 1 });
    const error = await rejection(client.register({ ip: IP, type: "cpanel", billingcycle: 1 }));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ mayHaveTakenEffect: true, retryable: true });
    expect(sandbox.requests()).toMatchObject([{ op: "register", status: "dropped" }]);
    const licenses = await client.listLicenses();
    expect(licenses.some((l) => l.ip === IP && l.type === "cpanel")).toBe(true);
    expect(sandbox.ledger()).toHaveLength(1);
  });
});
