import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type RunningSandbox, type Sandbox } from "../../src/sandbox/app.js";
import {
  AlreadyExistsError,
  InsufficientBalanceError,
  NotFoundError,
  UnauthorizedError,
  UpstreamUnavailableError,
} from "../../src/reseller/errors.js";
import { createV2Client, type V2Client } from "../../src/reseller/v2.js";
import { QUICK_RETRY, rejection } from "./helpers.js";

let sandbox: Sandbox;
let running: RunningSandbox;
const IP = "203.0.113.20";

beforeAll(async () => {
  sandbox = createSandbox();
  running = await sandbox.listen(0);
});
afterAll(() => running.close());
beforeEach(() => sandbox.reset());

describe.each(["GET", "POST"] as const)("v2 over %s against the sandbox", (method) => {
  let client: V2Client;
  beforeAll(() => {
    client = createV2Client({ baseUrl: running.legacyUrl, token: "sandbox-legacy-token", method, retry: QUICK_RETRY });
  });

  it("register buys the licence for the billing cycle sent", async () => {
    const answer = await client.register({ ip: IP, type: "cpanel", billingcycle: 12 });
    expect(answer).toEqual({ message: "License registered", raw: { ok: "True", message: "License registered" } });
    expect(sandbox.ledger()).toMatchObject([{ via: "v2", op: "register", ip: IP, type: "cpanel", months: 12 }]);
  });

  it("register without a billing cycle leaves it to the upstream", async () => {
    await client.register({ ip: IP, type: "plesk" });
    expect(sandbox.requests()[0]?.params).not.toHaveProperty("billingcycle");
    expect(sandbox.licenses()).toMatchObject([{ ip: IP, type: "plesk" }]);
  });

  it("renew extends the licence", async () => {
    await client.register({ ip: IP, type: "plesk", billingcycle: 1 });
    expect((await client.renew({ ip: IP, type: "plesk", billingcycle: 3 })).message).toBe("License renewed");
    expect(sandbox.ledger().map((c) => [c.op, c.months])).toEqual([
      ["register", 1],
      ["renew", 3],
    ]);
  });

  it("changeIp moves the licence", async () => {
    await client.register({ ip: IP, type: "plesk" });
    expect((await client.changeIp({ ip: IP, type: "plesk", newip: "203.0.113.21" })).message).toBe("IP changed");
    expect(sandbox.licenses().map((l) => l.ip)).toEqual(["203.0.113.21"]);
  });

  it("changeCore sets the litespeed variant from the core number", async () => {
    await client.register({ ip: IP, type: "litespeed" });
    expect((await client.changeCore({ ip: IP, core: 9 })).message).toBe("Core changed");
    expect(sandbox.licenses()[0]).toMatchObject({ type: "litespeed", variant: "litespeedX" });
  });

  it("a wrong token is unauthorized", async () => {
    const stranger = createV2Client({ baseUrl: running.legacyUrl, token: "nope-nope", method });
    const error = await rejection(stranger.register({ ip: IP, type: "cpanel" }));
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ upstreamMessage: "Wrong token", mayHaveTakenEffect: false, retryable: false });
  });

  it("an empty balance asks to charge the account", async () => {
    sandbox.setBalance(0);
    const error = await rejection(client.register({ ip: IP, type: "cpanel" }));
    expect(error).toBeInstanceOf(InsufficientBalanceError);
    expect(sandbox.ledger()).toEqual([]);
  });

  it("registering twice is already exists", async () => {
    await client.register({ ip: IP, type: "cpanel" });
    const error = await rejection(client.register({ ip: IP, type: "cpanel" }));
    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("renewing an unknown licence is not found", async () => {
    expect(await rejection(client.renew({ ip: IP, type: "cpanel" }))).toBeInstanceOf(NotFoundError);
  });

  it("a 503 with a plain-text body is unavailable, maybe applied, sent once", async () => {
    sandbox.setFaults({ failNext: 1 });
    const error = await rejection(client.register({ ip: IP, type: "cpanel" }));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ status: 503, mayHaveTakenEffect: true, retryable: true });
    expect(sandbox.requests()).toHaveLength(1);
  });

  it("a register whose answer is lost after commit may have taken effect, and it did", async () => {
    sandbox.setFaults({ dropNext: 1 });
    const error = await rejection(client.register({ ip: IP, type: "cpanel", billingcycle: 1 }));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ mayHaveTakenEffect: true });
    expect(sandbox.requests()).toMatchObject([{ via: "v2", op: "register", status: "dropped" }]);
    expect(sandbox.licenses().some((l) => l.ip === IP && l.type === "cpanel")).toBe(true);
  });
});
