import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createdEvent } from "../helpers/bridge.js";
import { waitStatus } from "../helpers/e2e-harness.js";
import { MIXED_CATALOGUE, useProviderBridges } from "../helpers/providers.js";
import { DEFAULT_SANDBOX_TOKENS, MAIN_RESELLER_ID } from "../../src/vocabulary/sandbox-identity.js";

/**
 * The forecast (GET /admin/forecast) of a bridge that buys from the reseller, Manage2 and CLN
 * (service-contract.md section 12): each renewal names its provider, Manage2's and CLN's terms
 * cost what they bill while the licence is active (the catalogue's price_per_month times the
 * months), each provider's cost is said apart, and only the reseller's cost is held against the
 * reseller balance: the others bill their own accounts.
 */

interface Forecast {
  balance: number | null;
  due: { service_id: string; provider: string; cost: number | null }[];
  total_cost: number | null;
  shortfall: number | null;
  by_provider: Record<string, { renewals: number; cost: number | null }>;
}

let dir: string;
let catalogue: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lb-forecast-providers-"));
  catalogue = join(dir, "products.json");
  const file = JSON.parse(readFileSync(MIXED_CATALOGUE, "utf8")) as { products: Record<string, Record<string, unknown>> };
  file.products["12"]!.price_per_month = 16;
  writeFileSync(catalogue, JSON.stringify(file));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the forecast with the reseller, Manage2 and CLN", () => {
  const start = useProviderBridges();
  const paidAYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10);

  it("names each renewal's provider, says each provider's cost apart, and holds only the reseller's against its balance", async () => {
    // A lead of 40 days makes a fresh monthly licence paid for a year due at once.
    const { sbs, bridge } = await start({
      env: { PRODUCTS_FILE: catalogue, RENEWAL_LEAD_DAYS: "40", RESELLER_ACCOUNT_ID: String(MAIN_RESELLER_ID), RESELLER_ADMIN_TOKEN: DEFAULT_SANDBOX_TOKENS.admin },
    });
    sbs.reseller.sandbox.setBalance(30);
    const ids: Record<string, string> = {};
    for (const [provider, product_id, ip] of [
      ["reseller", "12", "203.0.113.170"],
      ["manage2", "40", "203.0.113.171"],
      ["cln", "41", "203.0.113.172"],
    ] as const) {
      const event = createdEvent({ product_id, ip, next_due_date: paidAYear() });
      await bridge.send(event);
      await waitStatus(bridge, event.service.id, "active");
      ids[provider] = event.service.id;
    }

    const { status, body } = await bridge.admin("/admin/forecast?days=7");
    const f = body as unknown as Forecast;

    expect(status).toBe(200);
    expect(f.due.map((d) => [d.service_id, d.provider, d.cost]).sort()).toEqual(
      [
        [ids.reseller, "reseller", 16],
        [ids.manage2, "manage2", 15],
        [ids.cln, "cln", 10],
      ].sort(),
    );
    expect(f.by_provider).toEqual({ reseller: { renewals: 1, cost: 16 }, manage2: { renewals: 1, cost: 15 }, cln: { renewals: 1, cost: 10 } });
    expect(f.total_cost).toBe(41);
    expect(f.balance).toEqual(expect.any(Number));
    expect(f.shortfall).toBe(Math.max(0, 16 - f.balance!));
  });
});
