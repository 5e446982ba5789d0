import { describe, expect, it } from "vitest";
import { serviceEvent, type TestBridge } from "../helpers/bridge.js";
import { untilIdle, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { CLN_CLOUDLINUX, MANAGE2_ADMIN, orderActiveOf, useProviderBridges } from "../helpers/providers.js";
import { clnBehindTheBridge, manage2BehindTheBridge } from "../reconcile/helpers.js";
import { row } from "./helpers.js";

/**
 * Adoption (POST /admin/adopt) with the reseller, Manage2 and CLN (service-contract.md section
 * 12): each row is planned against its own provider's list (its product's, or the `provider`
 * column's), keyed by (provider, IP, what is bought); plan items and orphans name the provider;
 * an adopted Manage2 licence keeps its licence id. Licences are bought behind the bridge's back
 * through each provider's real API; the sandboxes' ledgers show that adoption bought nothing.
 */

interface PlanItem {
  service_identifier: string;
  provider: string | null;
  action: string;
  reason: string;
  cost: number | null;
}
interface Plan {
  plan: PlanItem[];
  orphans: { provider: string; ip: string; type: string; monthly_cost: number | null }[];
}

async function adopt(bridge: TestBridge, body: Record<string, unknown>): Promise<Plan> {
  const res = await bridge.admin("/admin/adopt", { method: "POST", body: JSON.stringify(body) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as unknown as Plan;
}
const item = (p: Plan, id: string) => p.plan.find((i) => i.service_identifier === id)!;

describe("adoption with the reseller, Manage2 and CLN", () => {
  const start = useProviderBridges();

  it("plans each row against its own provider's list: adopt what it holds, buy what it does not at the catalogue's price, each item naming its provider", async () => {
    const { sbs, bridge } = await start();
    await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.200", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.201", type: CLN_CLOUDLINUX });

    const p = await adopt(bridge, {
      services: [
        row({ service_identifier: "m2-held", package_identifier: "40", ip: "203.0.113.200" }),
        row({ service_identifier: "cln-held", package_identifier: "41", ip: "203.0.113.201" }),
        row({ service_identifier: "m2-missing", package_identifier: "40", ip: "203.0.113.202", billing_cycle: "annually" }),
      ],
    });

    expect(p.plan.map((i) => [i.service_identifier, i.provider, i.action, i.cost])).toEqual([
      ["m2-held", "manage2", "adopt", 0],
      ["cln-held", "cln", "adopt", 0],
      ["m2-missing", "manage2", "buy", 180],
    ]);
    expect(item(p, "m2-held").reason).toContain("cPanel Manage2 holds");
    expect(item(p, "m2-missing").reason).toContain("cPanel Manage2 holds no");
    expect(p.orphans).toEqual([]);
  });

  it("applies a Manage2 adoption with its provider, package and licence id on the row, buying nothing", async () => {
    const { sbs, bridge } = await start();
    const { licenseid } = await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.203", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.204", type: CLN_CLOUDLINUX });

    await adopt(bridge, {
      apply: true,
      services: [
        row({ service_identifier: "m2-adopted", package_identifier: "40", ip: "203.0.113.203" }),
        row({ service_identifier: "cln-adopted", package_identifier: "41", ip: "203.0.113.204" }),
      ],
    });

    expect(await bridge.service.services.get("m2-adopted")).toMatchObject({ status: "active", provider: "manage2", sku: String(MANAGE2_ADMIN), upstream_id: String(licenseid), companions: "[]" });
    expect(await bridge.service.services.get("cln-adopted")).toMatchObject({ status: "active", provider: "cln", sku: String(CLN_CLOUDLINUX), upstream_id: null });
    expect(sbs.manage2.ledger()).toHaveLength(1);
    expect(sbs.cln.ledger()).toHaveLength(1);
  });

  it("lists each provider's licences no row and no service claims as orphans, priced by the catalogue's price_per_month", async () => {
    const { sbs, bridge } = await start();
    await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.205", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.206", type: CLN_CLOUDLINUX });

    const p = await adopt(bridge, { services: [] });

    expect(p.orphans).toEqual([
      { provider: "manage2", ip: "203.0.113.205", type: "cpanel", monthly_cost: 15 },
      { provider: "cln", ip: "203.0.113.206", type: "cloudlinux", monthly_cost: 10 },
    ]);
  });

  it("a row whose provider column is not its product's provider is a conflict naming both", async () => {
    const { bridge } = await start();

    const p = await adopt(bridge, { services: [row({ service_identifier: "wrong-provider", package_identifier: "40", ip: "203.0.113.207", provider: "cln" })] });

    expect(item(p, "wrong-provider")).toMatchObject({ action: "conflict", provider: "cln", reason: expect.stringMatching(/cln.*manage2|manage2.*cln/) });
  });

  it("a Manage2 cPanel row at an IP where a reseller service holds cPanel is its own licence, adopted", async () => {
    const { sbs, bridge } = await start();
    await orderActiveOf(bridge, "12", "203.0.113.208");
    await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.208", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });

    const p = await adopt(bridge, { services: [row({ service_identifier: "m2-beside", package_identifier: "40", ip: "203.0.113.208" })] });

    expect(item(p, "m2-beside")).toMatchObject({ provider: "manage2", action: "adopt" });
  });

  it("adopts suspended a row the panel has suspended: its expired Manage2 licence as it is, its active CLN licence removed at CLN", async () => {
    const { sbs, bridge } = await start();
    const m2 = manage2BehindTheBridge(sbs);
    const { licenseid } = await m2.licenseAdd({ ip: "203.0.113.209", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });
    await m2.licenseExpire({ liscid: licenseid, reason: "suspended in the panel" });
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.210", type: CLN_CLOUDLINUX });

    const p = await adopt(bridge, {
      apply: true,
      services: [
        row({ service_identifier: "m2-suspended", package_identifier: "40", ip: "203.0.113.209", status: "Suspended" }),
        row({ service_identifier: "cln-suspended", package_identifier: "41", ip: "203.0.113.210", status: "Suspended" }),
      ],
    });
    await untilIdle(bridge);

    expect(p.plan.map((i) => [i.service_identifier, i.action])).toEqual([
      ["m2-suspended", "adopt"],
      ["cln-suspended", "adopt"],
    ]);
    expect(await bridge.service.services.get("m2-suspended")).toMatchObject({ status: "suspended", upstream_id: String(licenseid) });
    expect(await bridge.service.services.get("cln-suspended")).toMatchObject({ status: "suspended" });
    await waitFor(() => sbs.cln.licenses().length === 0);
    expect(sbs.manage2.ledger()).toHaveLength(1);
  });

  it("a row on a Manage2 licence a suspended service of the bridge records by its id, left expired at the IP that service moved from, is a conflict naming that service, in plan and apply alike", async () => {
    const { sbs, bridge } = await start();
    const held = await orderActiveOf(bridge, "40", "203.0.113.212");
    await bridge.send(serviceEvent("service.suspended", held));
    await waitStatus(bridge, held, "suspended");
    await bridge.send(serviceEvent("service.ip_changed", held, { service: { ip: "203.0.113.212" }, changes: { ip: "203.0.113.213" } }));
    await waitFor(async () => (await bridge.service.services.get(held))?.ip === "203.0.113.213");
    await untilIdle(bridge);
    const licenseid = sbs.manage2.licenses()[0]!.licenseid;
    const rows = [row({ service_identifier: "m2-on-its-licence", package_identifier: "40", ip: "203.0.113.212" })];

    const planned = await adopt(bridge, { services: rows });
    const applied = await adopt(bridge, { apply: true, services: rows });

    for (const p of [planned, applied]) {
      expect(item(p, "m2-on-its-licence")).toMatchObject({ provider: "manage2", action: "conflict", reason: expect.stringContaining(`service ${held} of the bridge`) });
      expect(item(p, "m2-on-its-licence").reason).toContain(`licence ${licenseid}`);
      expect(p.orphans).toEqual([]);
    }
    expect(await bridge.service.services.get("m2-on-its-licence")).toBeUndefined();
    expect(sbs.manage2.licenses()).toMatchObject([{ licenseid, ip: "203.0.113.212", status: 2 }]);
  });

  it("with no reseller configured, plans against the providers it has", async () => {
    const { sbs, bridge } = await start({ withoutReseller: true });
    await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.211", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });

    const p = await adopt(bridge, { services: [row({ service_identifier: "m2-alone", package_identifier: "40", ip: "203.0.113.211" })] });

    expect(p.plan.map((i) => [i.service_identifier, i.provider, i.action])).toEqual([["m2-alone", "manage2", "adopt"]]);
    expect(sbs.reseller.sandbox.requests()).toEqual([]);
  });
});
