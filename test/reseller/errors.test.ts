import { describe, expect, it } from "vitest";
import {
  AlreadyExistsError,
  errorFromV1Answer,
  errorFromV2Message,
  ForbiddenError,
  InsufficientBalanceError,
  NotFoundError,
  ResellerError,
  UnauthorizedError,
  UnexpectedAnswerError,
  UpstreamUnavailableError,
  ValidationError,
} from "../../src/reseller/errors.js";

const v1 = (status: number, body: unknown) => errorFromV1Answer({ operation: "v1.register", status, body });

describe("v1 factory: the class follows status and body", () => {
  it.each([
    [401, { success: false, error: "Unauthorized" }, UnauthorizedError, "unauthorized", false, false],
    [400, { success: false, error: "Insufficient balance" }, InsufficientBalanceError, "insufficient_balance", false, false],
    [402, { error: "Payment required" }, InsufficientBalanceError, "insufficient_balance", false, false],
    [404, { success: false, error: "Not found" }, NotFoundError, "not_found", false, false],
    [403, { success: false, error: "Forbidden" }, ForbiddenError, "forbidden", false, false],
    [422, { message: "Validation error", errors: { ip: ["bad"] } }, ValidationError, "validation", false, false],
    [422, { message: "Validation error", errors: { ip: ["License already exists"] } }, AlreadyExistsError, "already_exists", false, false],
    [409, { error: "License already exists" }, AlreadyExistsError, "already_exists", false, false],
    [503, { success: false, error: "Service unavailable" }, UpstreamUnavailableError, "unavailable", true, true],
    [500, "<html>boom</html>", UpstreamUnavailableError, "unavailable", true, true],
    [429, { error: "Too many requests" }, UpstreamUnavailableError, "unavailable", true, false],
    [418, { error: "I'm a teapot" }, UnexpectedAnswerError, "unexpected", false, false],
    [400, { error: "Bad request" }, UnexpectedAnswerError, "unexpected", false, false],
    [302, "", UnexpectedAnswerError, "unexpected", false, true],
  ] as const)("%i %j → %o", (status, body, cls, kind, retryable, mayHaveTakenEffect) => {
    const error = v1(status, body);
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(ResellerError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ kind, status, retryable, mayHaveTakenEffect, operation: "v1.register", raw: body });
    expect(error.name).toBe(cls.name);
    expect(error.message).toMatch(/^v1\.register: /);
  });

  // The settle window (contract §2) is for a charge whose answer never came; a 5xx of the
  // reseller's own ends the call, and the contract retries it within 2 seconds.
  it.each([
    ["a 503 of the reseller", v1(503, { error: "Service unavailable" }), false],
    ["a 500 of the reseller", v1(500, "<html>boom</html>"), false],
    ["a gateway's 502", v1(502, "<html>Bad Gateway</html>"), true],
    ["a gateway's 504", v1(504, "<html>Gateway Time-out</html>"), true],
    ["a timeout", new UpstreamUnavailableError({ operation: "v1.register", reason: "timeout" }), true],
    ["a dropped connection", new UpstreamUnavailableError({ operation: "v1.register", reason: "network", code: "ECONNRESET" }), true],
    ["a refused connection (never sent)", new UpstreamUnavailableError({ operation: "v1.register", reason: "network", code: "ECONNREFUSED", mayHaveTakenEffect: false }), false],
    ["a rate limit", v1(429, { error: "Too many requests" }), false],
    ["an unreadable 2xx", new UnexpectedAnswerError({ operation: "v1.register", status: 200 }), false],
  ])("%s: may the call still take effect? %s", (_name, error, still) => {
    expect(error.mayStillTakeEffect).toBe(still);
  });

  it("a 422 keeps the field errors, normalising single strings to lists", () => {
    const error = v1(422, { message: "Validation error", errors: { ip: ["must be an IP"], type: "unknown" } }) as ValidationError;
    expect(error.errors).toEqual({ ip: ["must be an IP"], type: ["unknown"] });
    expect(error.message).toBe("v1.register: invalid ip, type (HTTP 422)");
    expect(error.upstreamMessage).toBe("Validation error");
  });

  it("a 2xx that says success: false is classified by its text and was not applied", () => {
    const error = errorFromV1Answer({ operation: "v1.renew", status: 200, body: { success: false, error: "Not found" } });
    expect(error).toMatchObject({ kind: "not_found", mayHaveTakenEffect: false });
  });

  it("redacts secret-named keys in raw", () => {
    expect(v1(500, { error: "x", token: "abc" }).raw).toEqual({ error: "x", token: "[redacted]" });
  });
});

describe("v2 factory: the class follows the message", () => {
  const v2 = (message: string, refused = true) => errorFromV2Message({ operation: "v2.register", message, refused });

  it.each([
    ["Wrong token", UnauthorizedError, undefined],
    ["Please charge your account", InsufficientBalanceError, undefined],
    ["License already exists", AlreadyExistsError, undefined],
    ["License not found", NotFoundError, undefined],
    ["Invalid IP address format", ValidationError, { ip: ["Invalid IP address format"] }],
    ["Invalid new IP address", ValidationError, { newip: ["Invalid new IP address"] }],
    ["Invalid license type", ValidationError, { type: ["Invalid license type"] }],
    ["Invalid billing cycle", ValidationError, { billingcycle: ["Invalid billing cycle"] }],
    ["Invalid core", ValidationError, { core: ["Invalid core"] }],
    ["Invalid request", ValidationError, { _: ["Invalid request"] }],
  ] as const)("%j → %o, not applied, not retryable", (message, cls, errors) => {
    const error = v2(message);
    expect(error).toBeInstanceOf(cls);
    expect(error).toMatchObject({ retryable: false, mayHaveTakenEffect: false, upstreamMessage: message });
    if (errors) expect((error as ValidationError).errors).toEqual(errors);
  });

  it("an outage message is unavailable and retryable", () => {
    expect(v2("Service temporarily unavailable", false)).toMatchObject({ kind: "unavailable", retryable: true, mayHaveTakenEffect: true });
  });

  it("an unknown message is unexpected; applied-or-not follows whether the upstream said False", () => {
    expect(v2("Hmm", true)).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: false });
    expect(v2("Hmm", false)).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: true });
  });
});

describe("errors built by hand", () => {
  it("an unavailable error before sending is flagged as not applied", () => {
    const error = new UpstreamUnavailableError({ operation: "v1.register", reason: "network", code: "ECONNREFUSED", mayHaveTakenEffect: false });
    expect(error).toMatchObject({ kind: "unavailable", retryable: true, mayHaveTakenEffect: false, code: "ECONNREFUSED" });
    expect(error.message).toBe("v1.register: upstream unreachable (ECONNREFUSED)");
  });

  it("kind narrows the union", () => {
    const error: ResellerError = new ValidationError({ operation: "x", errors: { ip: ["bad"] } });
    if (error instanceof ValidationError) expect(error.kind).toBe("validation");
  });
});
