import { describe, expect, it } from "vitest";
import { IP, LEGACY, register, startSandbox, useSandbox } from "./helpers.js";

describe("fault injection", () => {
  const h = useSandbox();

  it("failNext answers 503 before doing anything, then recovers", async () => {
    h().sandbox.setFaults({ failNext: 1 });

    const failed = await register(h(), IP, "plesk");

    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({ success: false, error: "Service unavailable" });
    expect(h().sandbox.licenses()).toEqual([]);
    expect(h().sandbox.ledger()).toEqual([]);
    expect((await register(h(), IP, "plesk")).status).toBe(200);
  });

  it("failNext on v2 is a real HTTP 503 with a plain-text body", async () => {
    h().sandbox.setFaults({ failNext: 1 });

    const answer = await h().v2("/rc/license.php", { token: LEGACY, ip: IP, type: "plesk" });

    expect(answer.status).toBe(503);
    expect(answer.text).toBe("Service Unavailable");
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("failNext comes before authentication", async () => {
    h().sandbox.setFaults({ failNext: 1 });

    const answer = await h().v1("GET", "/license/list", { token: null });

    expect(answer.status).toBe(503);
  });

  it("dropNext commits the change, then closes the socket without an answer", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    await expect(register(h(), IP, "plesk")).rejects.toThrow();

    expect(h().sandbox.licenses().map((l) => [l.ip, l.type])).toEqual([[IP, "plesk"]]);
    expect(h().sandbox.ledger()).toHaveLength(1);
    expect(h().sandbox.requests()).toMatchObject([{ op: "register", status: "dropped" }]);
  });

  it("after a drop, the retried register is refused as existing and charges nothing more", async () => {
    h().sandbox.setFaults({ dropNext: 1 });
    await expect(register(h(), IP, "plesk")).rejects.toThrow();

    const retry = await register(h(), IP, "plesk");

    expect(retry.status).toBe(422);
    expect(h().sandbox.ledger()).toHaveLength(1);
    const listed = await h().v1("GET", "/license/list");
    expect(listed.body).toMatchObject({ data: [{ ip: IP, type: "plesk" }] });
  });

  it("dropNext answers refused mutations (v1 422, 400, 404; v2 ok False) and drops the next one that commits", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    expect((await register(h(), "999.1.1.1", "plesk")).status).toBe(422);
    expect((await h().v1("POST", "/license/renew", { body: { ip: IP, type: "plesk", billingcycle: 1 } })).status).toBe(404);
    h().sandbox.setBalance(0);
    expect((await register(h(), IP, "plesk")).status).toBe(400);
    h().sandbox.setBalance(1000);
    const refused = await h().v2("/rc/license.php", { token: LEGACY, ip: "not-an-ip", type: "plesk", billingcycle: "1" });
    expect(refused.body).toMatchObject({ ok: "False" });
    expect(h().sandbox.licenses()).toEqual([]);
    expect((await h().control("GET", "/faults")).body, "nothing was committed, so the drop is still armed").toMatchObject({ faults: { dropNext: 1 } });

    await expect(register(h(), IP, "plesk")).rejects.toThrow();

    expect(h().sandbox.licenses().map((l) => [l.ip, l.type])).toEqual([[IP, "plesk"]]);
    expect(h().sandbox.requests().map((r) => r.status)).toEqual([422, 404, 400, 200, "dropped"]);
    expect((await h().control("GET", "/faults")).body).toMatchObject({ faults: { dropNext: 0 } });
  });

  it("dropNext spares read-only requests", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    expect((await h().v1("GET", "/license/list")).status).toBe(200);
    await expect(register(h(), IP, "plesk")).rejects.toThrow();
  });

  it("dropNext also drops v2 mutations after committing", async () => {
    h().sandbox.setFaults({ dropNext: 1 });

    await expect(h().v2("/rc/license.php", { token: LEGACY, ip: IP, type: "plesk" })).rejects.toThrow();

    expect(h().sandbox.licenses()).toHaveLength(1);
  });

  it("latency delays API requests but not the control endpoints", async () => {
    h().sandbox.setFaults({ latencyMs: 150 });

    let started = Date.now();
    await h().v1("GET", "/license/list");
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    started = Date.now();
    await h().control("GET", "/ledger");
    expect(Date.now() - started).toBeLessThan(140);
  });
});

describe("fault rates", () => {
  it("errorRate fails the requests whose roll falls under it", async () => {
    const rolls = [0.1, 0.9];
    const h = await startSandbox({ faults: { errorRate: 0.5 }, random: () => rolls.shift() ?? 1 });
    try {
      expect((await register(h, IP, "plesk")).status).toBe(503);
      expect((await register(h, IP, "plesk")).status).toBe(200);
    } finally {
      await h.running.close();
    }
  });

  it("dropAfterCommitRate rolls only for mutations that committed a change", async () => {
    let rolls = 0;
    const h = await startSandbox({ faults: { dropAfterCommitRate: 1 }, random: () => (rolls++, 0.5) });
    try {
      expect((await register(h, "999.1.1.1", "plesk")).status).toBe(422);
      expect(rolls).toBe(0);
      await expect(register(h, IP, "plesk")).rejects.toThrow();
      expect(rolls).toBe(1);
    } finally {
      await h.running.close();
    }
  });

  it("dropAfterCommitRate drops the mutations whose roll falls under it", async () => {
    const h = await startSandbox({ faults: { dropAfterCommitRate: 1 }, random: () => 0.5 });
    try {
      expect((await h.v1("GET", "/license/list")).status).toBe(200);
      await expect(register(h, IP, "plesk")).rejects.toThrow();
      expect(h.sandbox.licenses()).toHaveLength(1);
    } finally {
      await h.running.close();
    }
  });
});
