import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIXED_CATALOGUE, useProviderBridges } from "../helpers/providers.js";

/**
 * The provisioning API (service-contract.md sections 8 and 12) over a bridge that buys from the
 * reseller, Manage2 and CLN: every answer names the licence's provider, and a Manage2 or CLN
 * licence's install command is its catalogue product's template with the licence's IP.
 */

let dir: string;
let catalogue: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lb-provision-providers-"));
  catalogue = join(dir, "products.json");
  const file = JSON.parse(readFileSync(MIXED_CATALOGUE, "utf8")) as { products: Record<string, Record<string, unknown>> };
  file.products["40"]!.install_command = "sh latest-cpanel --licence-ip={ip}";
  file.products["41"]!.install_command = "sh cldeploy -i --ip {ip}";
  writeFileSync(catalogue, JSON.stringify(file));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const order = (service_identifier: string, package_identifier: string, ip: string) => ({ service_identifier, package_identifier, ip, customer_email: "ann@example.com" });

describe("provisioning API answers with the reseller, Manage2 and CLN", () => {
  const start = useProviderBridges();

  it("names each licence's provider, in create's answer and info's", async () => {
    const { bridge } = await start({ env: { PRODUCTS_FILE: catalogue } });
    for (const [id, product, ip, provider] of [
      ["pp-reseller", "12", "203.0.113.160", "reseller"],
      ["pp-manage2", "40", "203.0.113.161", "manage2"],
      ["pp-cln", "41", "203.0.113.162", "cln"],
    ] as const) {
      const created = await bridge.provision("create", order(id, product, ip));
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body).toMatchObject({ service_identifier: id, status: "active", provider });
      expect((await bridge.provision("info", { service_identifier: id })).body).toMatchObject({ provider });
    }
  });

  it("gives a Manage2 or CLN licence the install command of its catalogue product, with its IP", async () => {
    const { bridge } = await start({ env: { PRODUCTS_FILE: catalogue } });
    await bridge.provision("create", order("pi-manage2", "40", "203.0.113.163"));
    await bridge.provision("create", order("pi-cln", "41", "203.0.113.164"));

    expect((await bridge.provision("info", { service_identifier: "pi-manage2" })).body).toMatchObject({ install_command: "sh latest-cpanel --licence-ip=203.0.113.163" });
    expect((await bridge.provision("info", { service_identifier: "pi-cln" })).body).toMatchObject({ install_command: "sh cldeploy -i --ip 203.0.113.164" });
  });
});
