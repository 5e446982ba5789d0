import { describe, expect, it } from "vitest";
import { dataOf, IP, OTHER_IP, register, RESELLER, useSandbox } from "./helpers.js";

const UNAUTHORIZED = { success: false, error: "Unauthorized" };
const NOT_FOUND = { success: false, error: "Not found" };
const INSUFFICIENT = { success: false, error: "Insufficient balance" };
const FORBIDDEN = { success: false, error: "Forbidden" };
const invalid = (errors: Record<string, string[]>) => ({ message: "Validation error", errors });

const ENDPOINTS: ["GET" | "POST", string][] = [
  ["GET", "/license/install-command?ip=203.0.113.10&type=cpanel"],
  ["GET", "/license/list"],
  ["POST", "/license/register"],
  ["POST", "/license/renew"],
  ["POST", "/license/suspend"],
  ["POST", "/license/unsuspend"],
  ["POST", "/license/change-ip"],
  ["POST", "/license/change-core"],
  ["POST", "/bundles"],
  ["POST", "/bundles/status"],
  ["GET", "/sub-reseller"],
  ["POST", "/sub-reseller"],
  ["POST", "/sub-reseller/2/credit"],
  ["POST", "/admin/reseller"],
  ["GET", "/admin/reseller/1/balance"],
  ["POST", "/admin/reseller/1/credit"],
];

describe("v1 errors", () => {
  const h = useSandbox();

  describe("401 Unauthorized", () => {
    it.each(ENDPOINTS)("%s %s without a token is 401", async (method, path) => {
      const answer = await h().v1(method, path, { token: null, body: method === "POST" ? {} : undefined });

      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(UNAUTHORIZED);
    });

    it("a wrong bearer token is 401", async () => {
      const answer = await h().v1("GET", "/license/list", { token: "nope" });

      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(UNAUTHORIZED);
    });

    it("the legacy (v2) token is not a v1 bearer token", async () => {
      const answer = await h().v1("GET", "/license/list", { token: "sandbox-legacy-token" });

      expect(answer.status).toBe(401);
    });

    it("authentication is checked before validation", async () => {
      const answer = await h().v1("POST", "/license/register", { token: null, rawBody: "{not json" });

      expect(answer.status).toBe(401);
    });
  });

  describe("403 for a reseller on admin endpoints", () => {
    it.each(ENDPOINTS.filter(([, path]) => path.startsWith("/admin")))("%s %s with the reseller token is 403", async (method, path) => {
      const answer = await h().v1(method, path, { token: RESELLER, body: method === "POST" ? {} : undefined });

      expect(answer.status).toBe(403);
      expect(answer.body).toEqual(FORBIDDEN);
    });
  });

  describe("422 Validation error", () => {
    it("names every missing field of register", async () => {
      const answer = await h().v1("POST", "/license/register", { body: {} });

      expect(answer.status).toBe(422);
      expect(answer.body).toEqual(
        invalid({
          ip: ["The ip field is required."],
          type: ["The type field is required."],
          billingcycle: ["The billingcycle field is required."],
        }),
      );
    });

    it("names every malformed field of register", async () => {
      const answer = await h().v1("POST", "/license/register", { body: { ip: "300.1.1.1", type: "windows", billingcycle: 2 } });

      expect(answer.status).toBe(422);
      expect(answer.body).toEqual(
        invalid({
          ip: ["The ip must be a valid IP address."],
          type: ["The selected type is invalid."],
          billingcycle: ["The billingcycle must be one of 1, 3, 6, 12, 24, 36."],
        }),
      );
    });

    it("refuses a billing cycle sent as a string", async () => {
      const answer = await h().v1("POST", "/license/register", { body: { ip: IP, type: "plesk", billingcycle: "12" } });

      expect(answer.body).toEqual(invalid({ billingcycle: ["The billingcycle must be one of 1, 3, 6, 12, 24, 36."] }));
    });

    it("refuses a body that is not JSON", async () => {
      const answer = await h().v1("POST", "/license/register", { rawBody: "{not json" });

      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({ message: "Validation error", errors: { body: [expect.any(String)] } });
    });

    it("treats a form-encoded body as missing fields", async () => {
      const answer = await h().v1("POST", "/license/register", {
        rawBody: `ip=${IP}&type=plesk&billingcycle=1`,
        contentType: "application/x-www-form-urlencoded",
      });

      expect(answer.status).toBe(422);
      expect(Object.keys((answer.body as { errors: object }).errors)).toEqual(["ip", "type", "billingcycle"]);
    });

    it.each([
      ["/license/renew", { ip: "x" }, ["ip", "type", "billingcycle"]],
      ["/license/suspend", { type: "nope" }, ["ip", "type"]],
      ["/license/unsuspend", {}, ["ip", "type"]],
      ["/license/change-ip", { ip: IP, type: "plesk", newip: "not-an-ip" }, ["newip"]],
      ["/license/change-core", { ip: IP, old_type: "litespeed", new_type: "litespeed16" }, ["new_type"]],
      ["/bundles", { ip: IP, bundle: "everything", billingcycle: 1 }, ["bundle"]],
      ["/bundles/status", {}, ["bundle_key"]],
      ["/sub-reseller", { name: "", email: "x", password: "short", role: "admin", commission_rate: 101 }, ["name", "email", "password", "role", "commission_rate"]],
      ["/sub-reseller/2/credit", { amount: 0 }, ["amount"]],
    ])("POST %s names the bad fields", async (path, body, fields) => {
      const answer = await h().v1("POST", path, { body });

      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({ message: "Validation error" });
      expect(Object.keys((answer.body as { errors: object }).errors)).toEqual(fields);
    });

    it("validates install-command's query", async () => {
      const answer = await h().v1("GET", "/license/install-command?ip=nope");

      expect(answer.status).toBe(422);
      expect(answer.body).toEqual(
        invalid({ ip: ["The ip must be a valid IP address."], type: ["The type field is required."] }),
      );
    });

    it("refuses a second register of the same IP and type, charging nothing", async () => {
      await register(h(), IP, "plesk");

      const answer = await register(h(), IP, "plesk");

      expect(answer.status).toBe(422);
      expect(answer.body).toEqual(invalid({ ip: ["License already exists"] }));
      expect(h().sandbox.ledger()).toHaveLength(1);
    });

    it("refuses moving a licence onto an IP that already has that type", async () => {
      await register(h(), IP, "plesk");
      await register(h(), OTHER_IP, "plesk");

      const answer = await h().v1("POST", "/license/change-ip", { body: { ip: IP, newip: OTHER_IP, type: "plesk" } });

      expect(answer.status).toBe(422);
      expect(answer.body).toEqual(invalid({ newip: ["License already exists"] }));
    });

    it("validation comes before existence", async () => {
      const answer = await h().v1("POST", "/license/renew", { body: { ip: IP, type: "plesk", billingcycle: 5 } });

      expect(answer.status).toBe(422);
    });
  });

  describe("404 Not found", () => {
    it.each([
      ["/license/renew", { ip: IP, type: "plesk", billingcycle: 1 }],
      ["/license/suspend", { ip: IP, type: "plesk" }],
      ["/license/unsuspend", { ip: IP, type: "plesk" }],
      ["/license/change-ip", { ip: IP, newip: OTHER_IP, type: "plesk" }],
      ["/license/change-core", { ip: IP, old_type: "litespeed", new_type: "litespeed4" }],
      ["/bundles/status", { bundle_key: "BK-NOPE" }],
      ["/sub-reseller/99/credit", { amount: 5 }],
    ])("POST %s for something that does not exist is 404", async (path, body) => {
      const answer = await h().v1("POST", path, { body });

      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(NOT_FOUND);
    });

    it("install-command for a missing licence is 404", async () => {
      const answer = await h().v1("GET", `/license/install-command?ip=${IP}&type=cpanel`);

      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(NOT_FOUND);
    });

    it("an unknown route under /api/v1 is 404", async () => {
      const answer = await h().v1("POST", "/license/delete", { body: {} });

      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(NOT_FOUND);
      expect(h().sandbox.requests().at(-1)).toMatchObject({ op: "unknown", status: 404 });
    });

    it("existence comes before balance", async () => {
      h().sandbox.setBalance(0);

      const answer = await h().v1("POST", "/license/renew", { body: { ip: IP, type: "plesk", billingcycle: 1 } });

      expect(answer.status).toBe(404);
    });
  });

  describe("400 Insufficient balance", () => {
    it("refuses a register the balance cannot pay for, and changes nothing", async () => {
      h().sandbox.setBalance(14);

      const answer = await register(h(), IP, "cpanel");

      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(INSUFFICIENT);
      expect(h().sandbox.licenses()).toEqual([]);
      expect(h().sandbox.ledger()).toEqual([]);
      expect(h().sandbox.balance()).toBe(14);
    });

    it("refuses a renew the balance cannot pay for, and keeps the expiry", async () => {
      const expiresAt = dataOf<{ expires_at: string }>(await register(h(), IP, "plesk")).expires_at;
      h().sandbox.setBalance(11);

      const answer = await h().v1("POST", "/license/renew", { body: { ip: IP, type: "plesk", billingcycle: 1 } });

      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(INSUFFICIENT);
      expect(h().sandbox.licenses()[0]?.expires_at).toBe(expiresAt);
    });

    it("lets a register spend the balance down to exactly zero", async () => {
      h().sandbox.setBalance(15);

      const answer = await register(h(), IP, "cpanel");

      expect(answer.status).toBe(200);
      expect(h().sandbox.balance()).toBe(0);
    });
  });
});
