import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/reseller/errors.js";
import { createV1Client, type V1Client } from "../../src/reseller/v1.js";
import { createV2Client, type V2Client } from "../../src/reseller/v2.js";
import { json, startTinyServer, type TinyServer } from "./helpers.js";

let server: TinyServer;
let v1: V1Client;
let v2: V2Client;

beforeAll(async () => {
  server = await startTinyServer((_req, res) => json(res, 200, { success: true, ok: "True", message: "ok", data: {} }));
  v1 = createV1Client({ baseUrl: `${server.url}/api/v1`, token: "t0ken-for-tests" });
  v2 = createV2Client({ baseUrl: server.url, token: "t0ken-for-tests" });
});
afterAll(() => server.close());

/** Input the types forbid, as a careless caller could still pass it at run time. */
const loose = <T>(value: unknown): T => value as T;

async function refusedBeforeSending(call: () => Promise<unknown>, field: string): Promise<void> {
  const before = server.requests.length;
  const error = await call().then(
    () => expect.fail("expected a ValidationError"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  const validation = error as ValidationError;
  expect(Object.keys(validation.errors)).toContain(field);
  expect(validation.message).toContain(field);
  expect(validation).toMatchObject({ status: undefined, mayHaveTakenEffect: false, retryable: false });
  expect(server.requests.length).toBe(before);
}

describe("our own input is checked before anything is sent", () => {
  it("a bad IP names ip", () => refusedBeforeSending(() => v1.register({ ip: "300.1.1.1", type: "cpanel", billingcycle: 1 }), "ip"));
  it("a bad new IP names newip", () =>
    refusedBeforeSending(() => v1.changeIp({ ip: "203.0.113.10", newip: "nope", type: "cpanel" }), "newip"));
  it("an unknown type names type", () =>
    refusedBeforeSending(() => v1.renew(loose({ ip: "203.0.113.10", type: "windows", billingcycle: 1 })), "type"));
  it("billingcycle 2 names billingcycle", () =>
    refusedBeforeSending(() => v1.register(loose({ ip: "203.0.113.10", type: "cpanel", billingcycle: 2 })), "billingcycle"));
  it("a negative amount names amount", () => refusedBeforeSending(() => v1.creditSubReseller(3, { amount: -5 }), "amount"));
  it("a zero reseller credit names amount", () =>
    refusedBeforeSending(() => v1.creditReseller(3, { amount: 0, description: "top-up" }), "amount"));
  it("an empty id names id", () => refusedBeforeSending(() => v1.resellerBalance(""), "id"));
  it("an unknown litespeed variant names new_type", () =>
    refusedBeforeSending(() => v1.changeCore(loose({ ip: "203.0.113.10", old_type: "litespeed", new_type: "litespeed16" })), "new_type"));
  it("a bad e-mail names email", () =>
    refusedBeforeSending(
      () => v1.createSubReseller({ name: "Ann", email: "not-an-address", password: "pw", commission_rate: 5 }),
      "email",
    ));
  it("core 3 names core (v2)", () => refusedBeforeSending(() => v2.changeCore(loose({ ip: "203.0.113.10", core: 3 })), "core"));
  it("billingcycle 2 names billingcycle (v2)", () =>
    refusedBeforeSending(() => v2.register(loose({ ip: "203.0.113.10", type: "cpanel", billingcycle: 2 })), "billingcycle"));
  it("a bad IP names ip (v2)", () => refusedBeforeSending(() => v2.renew({ ip: "10.0.0", type: "cpanel" }), "ip"));

  it("valid input does reach the server", async () => {
    const before = server.requests.length;
    await v1.suspend({ ip: "2001:db8::1", type: "cpanel" });
    expect(server.requests.length).toBe(before + 1);
  });
});
