import { describe, expect, it } from "vitest";
import { IP, LEGACY, OTHER_IP, register, RESELLER, useSandbox } from "./helpers.js";

const okAnswer = (message: string) => ({ ok: "True", message });
const refused = (message: string) => ({ ok: "False", message });

describe("v2 (query-string) interface", () => {
  const h = useSandbox();
  const licensePhp = (params: Record<string, string>, method: "GET" | "POST" = "GET") =>
    h().v2("/rc/license.php", { token: LEGACY, ...params }, { method });

  it("keeps an IP in its canonical form, so v1 and v2 find the licence under any spelling", async () => {
    expect((await licensePhp({ ip: "2001:DB8::0001", type: "plesk" })).body).toEqual(okAnswer("License registered"));
    expect(h().sandbox.licenses().map((l) => l.ip)).toEqual(["2001:db8::1"]);

    const suspended = await h().v1("POST", "/license/suspend", { body: { ip: "2001:db8::1", type: "plesk" } });
    expect(suspended.status).toBe(200);

    const moved = await h().v2("/rc/ChangeIp.php", { token: LEGACY, ip: "2001:db8:0:0::1", type: "plesk", newip: "::ffff:203.0.113.20" });
    expect(moved.body).toEqual(okAnswer("IP changed"));
    expect(h().sandbox.licenses().map((l) => l.ip)).toEqual([OTHER_IP]);
    const renewed = await h().v1("POST", "/license/renew", { body: { ip: OTHER_IP, type: "plesk", billingcycle: 1 } });
    expect(renewed.status).toBe(200);
  });

  describe.each(["GET", "POST"] as const)("over %s", (method) => {
    it("registers a licence for one month by default, as the main reseller", async () => {
      const answer = await licensePhp({ ip: IP, type: "cpanel" }, method);

      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(okAnswer("License registered"));
      expect(h().sandbox.ledger()).toMatchObject([{ via: "v2", op: "register", type: "cpanel", months: 1, amount: 15 }]);
      expect(h().sandbox.licenses().map((l) => l.type)).toEqual(["cpanel", "softaculous", "sitepad", "ssl"]);
    });

    it("renews a licence for the given billing cycle", async () => {
      await licensePhp({ ip: IP, type: "plesk" }, method);

      const answer = await h().v2("/rc/ReNew.php", { token: LEGACY, ip: IP, type: "plesk", billingcycle: "3" }, { method });

      expect(answer.body).toEqual(okAnswer("License renewed"));
      expect(h().sandbox.licenses()[0]?.expires_at).toBe("2025-05-15T10:00:00.000Z");
      expect(h().sandbox.ledger().map((c) => c.amount)).toEqual([12, 36]);
    });

    it("changes a licence's IP", async () => {
      await licensePhp({ ip: IP, type: "plesk" }, method);

      const answer = await h().v2("/rc/ChangeIp.php", { token: LEGACY, ip: IP, type: "plesk", newip: OTHER_IP }, { method });

      expect(answer.body).toEqual(okAnswer("IP changed"));
      expect(h().sandbox.licenses()[0]?.ip).toBe(OTHER_IP);
    });

    it("changes a litespeed licence's core", async () => {
      await licensePhp({ ip: IP, type: "litespeed" }, method);

      const answer = await h().v2("/ChangeCore.php", { token: LEGACY, ip: IP, core: "9" }, { method });

      expect(answer.body).toEqual(okAnswer("Core changed"));
      expect(h().sandbox.licenses()[0]?.variant).toBe("litespeedX");
    });
  });

  it("reads parameters from a form-encoded POST body", async () => {
    const answer = await h().v2("/rc/license.php", { token: LEGACY, ip: IP, type: "plesk" }, { method: "POST", form: true });

    expect(answer.body).toEqual(okAnswer("License registered"));
  });

  it("shares licences and balance with v1", async () => {
    await register(h(), IP, "plesk");

    const answer = await licensePhp({ ip: IP, type: "plesk" });

    expect(answer.body).toEqual(refused("License already exists"));
    expect(h().sandbox.balance()).toBe(988);
  });

  describe("refusals, always HTTP 200", () => {
    it.each([
      ["a missing token", "/rc/license.php", { ip: IP, type: "plesk" }, "Wrong token"],
      ["the v1 token", "/rc/license.php", { token: RESELLER, ip: IP, type: "plesk" }, "Wrong token"],
      ["a bad ip", "/rc/license.php", { token: LEGACY, ip: "1.2.3", type: "plesk" }, "Invalid IP address format"],
      ["a missing ip", "/rc/ReNew.php", { token: LEGACY, type: "plesk" }, "Invalid IP address format"],
      ["a bad newip", "/rc/ChangeIp.php", { token: LEGACY, ip: IP, type: "plesk", newip: "x" }, "Invalid IP address format"],
      ["an unknown type", "/rc/license.php", { token: LEGACY, ip: IP, type: "windows" }, "Invalid license type"],
      ["a bad billing cycle", "/rc/license.php", { token: LEGACY, ip: IP, type: "plesk", billingcycle: "2" }, "Invalid billing cycle"],
      ["a core that is not 2/4/8/9", "/ChangeCore.php", { token: LEGACY, ip: IP, core: "16" }, "Invalid core"],
      ["renewing a missing licence", "/rc/ReNew.php", { token: LEGACY, ip: IP, type: "plesk" }, "License not found"],
      ["moving a missing licence", "/rc/ChangeIp.php", { token: LEGACY, ip: IP, type: "plesk", newip: OTHER_IP }, "License not found"],
      ["a core change without litespeed", "/ChangeCore.php", { token: LEGACY, ip: IP, core: "4" }, "License not found"],
    ])("%s: %s answers the refusal", async (_case, path, params, message) => {
      const answer = await h().v2(path, params as Record<string, string>);

      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(refused(message));
      expect(h().sandbox.ledger()).toEqual([]);
    });

    it("a second register is 'License already exists' and charges nothing", async () => {
      await licensePhp({ ip: IP, type: "plesk" });

      const answer = await licensePhp({ ip: IP, type: "plesk" });

      expect(answer.body).toEqual(refused("License already exists"));
      expect(h().sandbox.ledger()).toHaveLength(1);
    });

    it("a purchase the balance cannot pay for is 'Please charge your account'", async () => {
      h().sandbox.setBalance(5);

      const answer = await licensePhp({ ip: IP, type: "plesk" });

      expect(answer.body).toEqual(refused("Please charge your account"));
      expect(h().sandbox.licenses()).toEqual([]);
    });

    it("moving onto an IP that already has that type is 'License already exists'", async () => {
      await licensePhp({ ip: IP, type: "plesk" });
      await licensePhp({ ip: OTHER_IP, type: "plesk" });

      const answer = await h().v2("/rc/ChangeIp.php", { token: LEGACY, ip: IP, type: "plesk", newip: OTHER_IP });

      expect(answer.body).toEqual(refused("License already exists"));
    });
  });

  it("paths are case-sensitive, like the PHP scripts they imitate", async () => {
    const answer = await h().v2("/rc/renew.php", { token: LEGACY, ip: IP, type: "plesk" });

    expect(answer.status).toBe(404);
  });
});
