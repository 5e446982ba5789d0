import { describe, expect, it } from "vitest";
import {
  AlreadyExistsError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  UnexpectedAnswerError,
  UpstreamUnavailableError,
  ValidationError,
} from "../../../src/reseller/errors.js";
import { captureLogs, rejection, until } from "../../reseller/helpers.js";
import { ADMIN, IP, NEW_IP, PASSWORD, PRO, startManage2, USER, useManage2 } from "./helpers.js";

describe("a Manage2 answer that says no", () => {
  const h = useManage2();

  it("status 0 is an error carrying its reason, never a success", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseAdd", refuse: "Something unforeseen happened" });

    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ status: 200, upstreamMessage: "Something unforeseen happened", mayHaveTakenEffect: false, disposition: "retry" });
    expect((error as Error).message).toBe("manage2.XMLlicenseAdd: Something unforeseen happened (Manage2 status 0)");
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("status -1 (the legacy pages' 'has not been') is a failure too", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseExpire", refuse: "The license has not been expired", status: -1 });

    const error = await rejection(h().client().licenseExpire({ liscid: 7000001 }));

    expect(error).toMatchObject({ upstreamMessage: "The license has not been expired", message: expect.stringContaining("status -1") });
  });

  it("an answer without a status is unexpected, and a change behind it may have happened", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseAdd", http: 200, contentType: "application/json", body: JSON.stringify({ reason: "OK", licenseid: "1" }) });

    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ mayHaveTakenEffect: true, message: expect.stringContaining("no status") });
  });

  it("status 1 is a success whatever its reason says", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseAdd", http: 200, contentType: "application/json", body: JSON.stringify({ status: "1", reason: "Failed? No.", licenseid: "77" }) });

    expect(await h().client().licenseAdd({ ip: IP, packageid: ADMIN })).toMatchObject({ licenseid: 77, reason: "Failed? No." });
  });

  it("Empty license. is not found", async () => {
    const error = await rejection(h().client().licenseExpire({ liscid: 42 }));

    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ upstreamMessage: "Empty license.", disposition: "fail" });
  });

  it("a second add on an IP and package that hold an active licence is already there, and buys nothing", async () => {
    await h().client().licenseAdd({ ip: IP, packageid: ADMIN });

    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect(error).toMatchObject({ upstreamMessage: "203.0.113.10 already has an active CPANEL-ADMIN-CLOUD license (7000001)." });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("an unknown package is invalid, naming packageid", async () => {
    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: 99999 }));

    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ errors: { packageid: ["Invalid package id."] }, disposition: "block" });
  });

  it("a refused package update blocks for the operator with Manage2's reason", async () => {
    await h().client().licenseAdd({ ip: IP, packageid: ADMIN });
    h().sandbox.setDialect({ packageUpdate: "refuse" });

    const error = await rejection(h().client().packageUpdate({ ip: IP, oldpackageid: ADMIN, newpackageid: PRO }));

    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ disposition: "block", upstreamMessage: expect.stringMatching(/^A Partner does not have the ability to upgrade or downgrade/) });
    expect(h().sandbox.licenses()).toMatchObject([{ packageid: ADMIN }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("status 0 with a success text (the transfer page's own example) is an error that may have taken effect", async () => {
    await h().client().licenseAdd({ ip: IP, packageid: ADMIN });
    h().sandbox.setDialect({ transferStatus: 0 });

    const error = await rejection(h().client().transfer({ oldip: IP, newip: NEW_IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ mayHaveTakenEffect: true, upstreamMessage: expect.stringMatching(/^Transferred CPANEL-ADMIN-CLOUD license 7000001/) });
    expect(h().sandbox.licenses()).toMatchObject([{ ip: NEW_IP }]);
  });
});

describe("Manage2 refusing the caller", () => {
  const h = useManage2();

  it("a wrong password is unauthorized (HTTP 401), asked once, and the password shows nowhere", async () => {
    const wrong = "not-the-password-4711";
    const logs = captureLogs();
    const client = h().client({ password: wrong, logger: logs.logger });

    const error = await rejection(client.licenseInfo());

    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ status: 401, disposition: "block", mayHaveTakenEffect: false });
    expect(h().sandbox.requests()).toMatchObject([{ op: "XMLlicenseInfo", status: 401 }]);
    const shown = JSON.stringify({ message: (error as Error).message, raw: (error as UnauthorizedError).raw, logs: logs.text() });
    expect(shown).not.toContain(wrong);
    expect(shown).not.toContain(Buffer.from(`${USER}:${wrong}`).toString("base64"));
  });

  it("a caller that is not an Access IP is refused (403)", async () => {
    const guarded = await startManage2({ accessIps: ["198.51.100.7"] });
    try {
      const error = await rejection(guarded.client().licenseInfo());

      expect(error).toBeInstanceOf(ForbiddenError);
      expect(error).toMatchObject({ status: 403, disposition: "block" });
    } finally {
      await guarded.close();
    }
  });

  it("the password is kept out of log lines and errors, even when an answer echoes it", async () => {
    const logs = captureLogs();
    h().sandbox.answerNext({ fn: "XMLlicenseAdd", http: 500, contentType: "text/plain", body: `crash while checking ${USER}:${PASSWORD}` });

    const error = await rejection(h().client({ logger: logs.logger, method: "GET" }).licenseAdd({ ip: IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(logs.lines().some((line) => line.operation === "manage2.XMLlicenseAdd")).toBe(true);
    const shown = JSON.stringify({ message: (error as Error).message, raw: (error as UpstreamUnavailableError).raw, upstream: (error as UpstreamUnavailableError).upstreamMessage, logs: logs.text() });
    expect(shown).not.toContain(PASSWORD);
    expect(shown).toContain("[redacted]");
  });
});

describe("our own input, checked before anything is sent", () => {
  const h = useManage2();

  it("external_notes longer than 64 characters is refused naming the field", async () => {
    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: ADMIN, external_notes: "x".repeat(65) }));

    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ errors: { external_notes: [expect.stringContaining("at most 64 characters")] }, mayHaveTakenEffect: false });
    expect(h().sandbox.requests()).toEqual([]);
  });

  it("64 characters, counted as a person counts them, are sent", async () => {
    const notes = "é".repeat(63) + "🙂";

    await h().client().licenseAdd({ ip: IP, packageid: ADMIN, external_notes: notes });

    expect(h().sandbox.licenses()).toMatchObject([{ external_notes: notes }]);
  });

  it.each([
    ["ip", { ip: "300.1.1.1", packageid: ADMIN }],
    ["packageid", { ip: IP, packageid: "X12" }],
    ["groupid", { ip: IP, packageid: ADMIN, groupid: "P678" }],
  ] as const)("a bad %s is refused naming it", async (field, input) => {
    const error = await rejection(h().client().licenseAdd(input as never));

    expect(error).toMatchObject({ errors: { [field]: [expect.any(String)] } });
    expect(h().sandbox.requests()).toEqual([]);
  });
});

describe("a Manage2 that is slow, drops answers and finishes work after we gave up", () => {
  const h = useManage2();

  it("a lost answer to an add may have taken effect, and it did: one licence, one charge, sent once", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ mayHaveTakenEffect: true });
    expect(h().sandbox.requests()).toMatchObject([{ op: "XMLlicenseAdd", status: "dropped" }]);
    expect(h().sandbox.ledger()).toMatchObject([{ op: "add", ip: IP, packageid: ADMIN }]);
  });

  it("a lost answer to a reactivation may have taken effect, and it did", async () => {
    const client = h().client();
    const { licenseid } = await client.licenseAdd({ ip: IP, packageid: ADMIN });
    await client.licenseExpire({ liscid: licenseid });
    h().sandbox.setFaults({ dropNext: 1 });

    const error = await rejection(client.licenseReActivate({ liscid: licenseid }));

    expect(error).toMatchObject({ kind: "unavailable", mayHaveTakenEffect: true });
    expect(h().sandbox.ledger().map((c) => c.op)).toEqual(["add", "reactivate"]);
    expect(h().sandbox.licenses()).toMatchObject([{ licenseid, status: 1 }]);
  });

  it("a lost answer to a transfer may have taken effect, and the licence moved", async () => {
    const client = h().client();
    await client.licenseAdd({ ip: IP, packageid: ADMIN });
    h().sandbox.setFaults({ dropNext: 1 });

    expect(await rejection(client.transfer({ oldip: IP, newip: NEW_IP, packageid: ADMIN }))).toMatchObject({ mayHaveTakenEffect: true });
    expect(h().sandbox.licenses()).toMatchObject([{ ip: NEW_IP }]);
  });

  it("an unreadable answer to an add is unexpected, may have taken effect, and it did", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseAdd", garble: true });

    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: ADMIN }));

    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ mayHaveTakenEffect: true, message: expect.stringContaining("JSON that does not parse") });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("an answer in XML, not JSON, is unexpected", async () => {
    h().sandbox.answerNext({ fn: "XMLlicenseInfo", http: 200, contentType: "text/xml", body: '<XMLlicenseInfo reason="OK" status="1"/>' });

    const error = await rejection(h().client().licenseInfo());

    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ message: expect.stringContaining("not JSON"), mayHaveTakenEffect: false });
  });

  it("a held add is carried out after the caller gave up: in the account and the ledger", async () => {
    h().sandbox.setFaults({ holdMs: 1_000, holdNext: 1 });

    const error = await rejection(h().client({ timeoutMs: 200 }).licenseAdd({ ip: IP, packageid: ADMIN, external_notes: "lb:held" }));

    expect(error).toMatchObject({ kind: "unavailable", reason: "timeout", mayHaveTakenEffect: true });
    expect(h().sandbox.requests()).toMatchObject([{ op: "XMLlicenseAdd", held: true }]);
    await until(() => h().sandbox.requests()[0]?.status === 200, 5_000);
    expect(h().sandbox.ledger()).toMatchObject([{ op: "add", ip: IP }]);
    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, status: 1, external_notes: "lb:held" }]);
  });

  it("a 503 to a change is not asked again", async () => {
    h().sandbox.setFaults({ failNext: 1 });

    const error = await rejection(h().client().licenseAdd({ ip: IP, packageid: ADMIN }));

    expect(error).toMatchObject({ kind: "unavailable", status: 503, mayHaveTakenEffect: true });
    expect(h().sandbox.requests()).toHaveLength(1);
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("a 503 to a read is asked again", async () => {
    h().sandbox.setFaults({ failNext: 2 });

    expect(await h().client().licenseInfo()).toEqual([]);
    expect(h().sandbox.requests().map((r) => r.status)).toEqual([503, 503, 200]);
  });
});
