import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResellerError } from "../../src/reseller/errors.js";
import { createV1Client } from "../../src/reseller/v1.js";
import { json, QUICK_RETRY, rejection, startTinyServer, type TinyServer } from "./helpers.js";

/**
 * Which 2xx answers to a charge are a purchase (service-contract.md section 7: any 2xx is
 * success, `{"success": true, ...}` may or may not be there). A refusal read as a purchase marks
 * a licence active with nothing bought, so every spelling of "false" the vendor's interfaces
 * use (the legacy one writes "True"/"False") is a refusal, and so is an answer that only
 * reports an error.
 */

const TOKEN = "tok_v1_success_0123456789";
const REGISTER = { ip: "203.0.113.10", type: "cpanel", billingcycle: 1 } as const;

describe("v1: is a 2xx answer to a register a purchase?", () => {
  let server: TinyServer;
  let reply: unknown = {};
  beforeAll(async () => {
    server = await startTinyServer((_req, res) => json(res, 200, reply));
  });
  afterAll(() => server.close());

  const register = () => createV1Client({ baseUrl: `${server.url}/api/v1`, token: TOKEN, retry: QUICK_RETRY }).register(REGISTER);

  it.each<[string, unknown]>([
    ["success false", false],
    ['success "false"', "false"],
    ['success "False"', "False"],
    ['success "FALSE"', "FALSE"],
    ['success " False "', " False "],
    ["success 0", 0],
    ['success "0"', "0"],
    ['success "no"', "no"],
    ['success "No"', "No"],
  ])("%s is a refusal, classified by its message, that did not take effect", async (_what, success) => {
    reply = { success, error: "Insufficient balance" };
    const error = await rejection(register());
    expect(error).toBeInstanceOf(ResellerError);
    expect(error).toMatchObject({ kind: "insufficient_balance", status: 200, mayHaveTakenEffect: false, upstreamMessage: "Insufficient balance" });
  });

  it.each<[string, unknown]>([
    ["success true", { success: true }],
    ['success "True"', { success: "True", message: "License registered" }],
    ['success "true"', { success: "true" }],
    ["success 1", { success: 1 }],
    ['success "1"', { success: "1" }],
    ['success "yes"', { success: "yes" }],
    ["no success field", { message: "License registered", data: { ip: "203.0.113.10" } }],
    ["an empty object", {}],
    ["error null", { success: true, error: null }],
    ["error empty", { error: "" }],
    ["error false", { error: false, message: "License registered" }],
    ['error "false"', { error: "false" }],
    ["error 0", { error: 0 }],
    ["an empty errors list", { errors: [] }],
    // The flag is the field made to say it; an error beside it is not read as a refusal.
    ["success true beside an error", { success: true, error: "Insufficient balance" }],
  ])("%s is a purchase", async (_what, body) => {
    reply = body;
    await expect(register()).resolves.toMatchObject({ raw: body });
  });

  it("a body with only an error is a refusal, classified by its message", async () => {
    reply = { error: "Insufficient balance" };
    const error = await rejection(register());
    expect(error).toMatchObject({ kind: "insufficient_balance", status: 200, mayHaveTakenEffect: false });
  });

  it("a body with only an error we do not know is an unexpected answer that did not take effect, retried", async () => {
    reply = { error: "Something went wrong" };
    const error = await rejection(register());
    expect(error).toMatchObject({ kind: "unexpected", status: 200, mayHaveTakenEffect: false, disposition: "retry", upstreamMessage: "Something went wrong" });
  });

  it('error: "True" with a message is a refusal that did not take effect', async () => {
    reply = { error: "True", message: "License already exists" };
    const error = await rejection(register());
    expect(error).toMatchObject({ status: 200, mayHaveTakenEffect: false });
  });

  it.each<[string, unknown, string]>([
    ["error: {message}", { error: { message: "Invalid IP address" } }, "validation"],
    ["error: true with a message", { error: true, message: "Insufficient balance" }, "insufficient_balance"],
    ["an unknown success value beside an error", { success: "maybe", error: "License not found" }, "not_found"],
  ])("%s is a refusal", async (_what, body, kind) => {
    reply = body;
    const error = await rejection(register());
    expect(error).toMatchObject({ kind, status: 200, mayHaveTakenEffect: false });
  });
});
