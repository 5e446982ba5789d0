import { describe, expect, it } from "vitest";
import {
  readBundleKey,
  readBundleStatus,
  readExpiresAt,
  readInstallCommand,
  readLicenseList,
  readSubResellerList,
  readV2Answer,
  v1Success,
} from "../../src/reseller/answers.js";
import { ResellerError, UnexpectedAnswerError } from "../../src/reseller/errors.js";
import type { Answer } from "../../src/reseller/transport.js";

const ok = (body: unknown, status = 200): Answer => ({ status, body, isJson: typeof body !== "string" });

function thrown(fn: () => unknown): ResellerError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ResellerError);
    return error as ResellerError;
  }
  return expect.fail("expected a ResellerError");
}

describe("install command", () => {
  it.each([
    ["under command", { command: "sh a.sh" }],
    ["under install_command", { install_command: "sh a.sh" }],
    ["under data.command", { success: true, data: { command: "sh a.sh" } }],
    ["under data.install_command", { data: { install_command: "sh a.sh" } }],
    ["as a plain-text body", "  sh a.sh\n"],
  ])("is read %s", (_where, body) => {
    expect(readInstallCommand("v1.installCommand", ok(body))).toBe("sh a.sh");
  });

  it.each([
    ["an object without it", { data: { cmd: "x" } }],
    ["an empty body", ""],
    ["an HTML page", "<!DOCTYPE html><html><title>Oops</title></html>"],
    ["a number", { command: 42 }],
  ])("is an UnexpectedAnswerError for %s, carrying the body", (_what, body) => {
    const error = thrown(() => readInstallCommand("v1.installCommand", ok(body)));
    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error.raw).toEqual(body);
    expect(error.operation).toBe("v1.installCommand");
  });
});

describe("licence list", () => {
  const item = { ip: "203.0.113.10", type: "cpanel" };

  it.each([
    ["at the top level", [item]],
    ["under data", { success: true, data: [item] }],
    ["under licenses", { licenses: [item] }],
    ["under data.licenses", { data: { licenses: [item] } }],
  ])("is read %s", (_where, body) => {
    expect(readLicenseList("v1.listLicenses", ok(body))).toEqual([{ ...item, raw: item }]);
  });

  it("reads the optional fields and keeps unknown keys in raw", () => {
    const full = {
      ip: "203.0.113.10",
      type: "softaculous",
      status: "active",
      expires_at: "2030-01-01T00:00:00.000Z",
      billingcycle: "12",
      variant: "litespeed4",
      free: true,
      parent: "cpanel",
      bundle_key: "bk_1",
      key: "LIC-1",
    };
    const [license] = readLicenseList("v1.listLicenses", ok({ data: [full] }));
    expect(license).toEqual({
      ip: "203.0.113.10",
      type: "softaculous",
      status: "active",
      expires_at: "2030-01-01T00:00:00.000Z",
      billingcycle: 12,
      variant: "litespeed4",
      free: true,
      parent: "cpanel",
      bundle_key: "bk_1",
      raw: full,
    });
  });

  it("skips items without ip or type and optional fields of the wrong shape", () => {
    const body = { data: [item, { ip: "203.0.113.11" }, "junk", null, { ...item, ip: "203.0.113.12", billingcycle: "monthly" }] };
    const licenses = readLicenseList("v1.listLicenses", ok(body));
    expect(licenses.map((l) => l.ip)).toEqual(["203.0.113.10", "203.0.113.12"]);
    expect(licenses[1]?.billingcycle).toBeUndefined();
  });

  it("turns Unix-second expiry times into ISO strings", () => {
    const [license] = readLicenseList("v1.listLicenses", ok([{ ...item, expires_at: 1_893_456_000 }]));
    expect(license?.expires_at).toBe("2030-01-01T00:00:00.000Z");
  });

  it("is an UnexpectedAnswerError when there is no array anywhere", () => {
    expect(thrown(() => readLicenseList("v1.listLicenses", ok({ data: { count: 0 } })))).toBeInstanceOf(UnexpectedAnswerError);
    expect(thrown(() => readLicenseList("v1.listLicenses", ok("no licences")))).toBeInstanceOf(UnexpectedAnswerError);
  });
});

describe("bundle key, expiry and status", () => {
  it.each([
    ["at the top level", { bundle_key: "bk_1" }],
    ["under data", { data: { bundle_key: "bk_1" } }],
  ])("bundle_key is read %s", (_where, body) => {
    expect(readBundleKey("v1.registerBundle", ok(body))).toBe("bk_1");
  });

  it("a bundle answer without a key may have bought the bundle", () => {
    const error = thrown(() => readBundleKey("v1.registerBundle", ok({ success: true, data: {} })));
    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error.mayHaveTakenEffect).toBe(true);
  });

  it("expires_at is read at the top level or under data, and absent is fine", () => {
    expect(readExpiresAt({ expires_at: "2030-01-01" })).toBe("2030-01-01");
    expect(readExpiresAt({ data: { expires_at: "2030-01-01" } })).toBe("2030-01-01");
    expect(readExpiresAt({ data: {} })).toBeUndefined();
    expect(readExpiresAt("text")).toBeUndefined();
  });

  it("bundle status prefers data.status over a top-level success word", () => {
    expect(readBundleStatus({ status: "success", data: { status: "active" } })).toBe("active");
    expect(readBundleStatus({ status: "suspended" })).toBe("suspended");
    expect(readBundleStatus({ status: "success" })).toBeUndefined();
  });
});

describe("sub-reseller list", () => {
  it("reads items at the top level or under data, numbers from strings", () => {
    const record = { id: 7, name: "Ann", email: "ann@example.com", role: "sub_reseller", commission_rate: "10", balance: 5 };
    const expected = [{ id: "7", name: "Ann", email: "ann@example.com", role: "sub_reseller", commission_rate: 10, balance: 5, raw: record }];
    expect(readSubResellerList("v1.listSubResellers", ok([record]))).toEqual(expected);
    expect(readSubResellerList("v1.listSubResellers", ok({ data: [record, 3] }))).toEqual(expected);
  });

  it("redacts a password or token an item carries", () => {
    const [item] = readSubResellerList("v1.listSubResellers", ok({ data: [{ id: 1, password: "pw", token: "t" }] }));
    expect(item?.raw).toEqual({ id: 1, password: "[redacted]", token: "[redacted]" });
  });
});

describe("v1 success", () => {
  it("any 2xx is success, with or without success: true", () => {
    expect(v1Success("v1.suspend", ok({ success: true }))).toEqual({ success: true });
    expect(v1Success("v1.suspend", ok({}, 201))).toEqual({});
    expect(v1Success("v1.suspend", ok("", 204))).toBe("");
  });

  it("a 2xx that says success: false is an error classified by its text", () => {
    const error = thrown(() => v1Success("v1.register", ok({ success: false, error: "Insufficient balance" })));
    expect(error.kind).toBe("insufficient_balance");
    expect(error.mayHaveTakenEffect).toBe(false);
  });
});

describe("v2 answers", () => {
  it.each(["True", "true", "TRUE", " true "])("ok %j is success", (flag) => {
    expect(readV2Answer("v2.register", ok({ ok: flag, message: "License registered" }))).toEqual({ message: "License registered" });
  });

  it("ok as a JSON boolean is accepted too", () => {
    expect(readV2Answer("v2.register", ok({ ok: true }))).toEqual({ message: "" });
  });

  it.each([
    ["Wrong token", "unauthorized", {}],
    ["Please charge your account", "insufficient_balance", {}],
    ["License already exists", "already_exists", {}],
    ["Invalid IP address format", "validation", { ip: ["Invalid IP address format"] }],
    ["License not found", "not_found", {}],
    ["Invalid license type", "validation", { type: ["Invalid license type"] }],
    ["Invalid billing cycle", "validation", { billingcycle: ["Invalid billing cycle"] }],
    ["Invalid core", "validation", { core: ["Invalid core"] }],
  ])("ok False with %j is %s", (message, kind, errors) => {
    const error = thrown(() => readV2Answer("v2.register", ok({ ok: "False", message })));
    expect(error.kind).toBe(kind);
    expect(error.upstreamMessage).toBe(message);
    expect(error.mayHaveTakenEffect).toBe(false);
    if (kind === "validation") expect((error as unknown as { errors: unknown }).errors).toEqual(errors);
  });

  it("ok false with an unknown message is unexpected but certainly not applied", () => {
    const error = thrown(() => readV2Answer("v2.renew", ok({ ok: "false", message: "Something odd" })));
    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: false });
  });

  it("a plain-text body is an error message", () => {
    expect(thrown(() => readV2Answer("v2.register", ok("Please charge your account"))).kind).toBe("insufficient_balance");
    expect(thrown(() => readV2Answer("v2.register", ok("<html><body><h1>Wrong token</h1></body></html>"))).kind).toBe("unauthorized");
  });

  it("a plain-text body that says nothing known is unexpected and may have been applied", () => {
    const error = thrown(() => readV2Answer("v2.register", ok("Done!")));
    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: true, raw: "Done!" });
  });

  it("a JSON body without ok is unexpected, carrying the body", () => {
    const error = thrown(() => readV2Answer("v2.register", ok({ status: "success" })));
    expect(error).toMatchObject({ kind: "unexpected", raw: { status: "success" } });
  });

  it("a 503 plain-text body is unavailable", () => {
    const error = thrown(() => readV2Answer("v2.register", ok("Service Unavailable", 503)));
    expect(error).toMatchObject({ kind: "unavailable", status: 503, retryable: true, mayHaveTakenEffect: true });
  });

  it("a 403 that says Wrong token is unauthorized", () => {
    expect(thrown(() => readV2Answer("v2.register", ok("Wrong token", 403))).kind).toBe("unauthorized");
  });
});
