import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCatalog } from "../../src/catalog/catalog.js";
import { ConfigError } from "../../src/config/load.js";
import { systemClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log/logger.js";
import { blestaCycle, ipAllowList } from "../../src/webhooks/adapters/blesta.js";
import { getPath, pick } from "../../src/webhooks/adapters/field-maps.js";
import { hostbillCycle } from "../../src/webhooks/adapters/hostbill.js";
import { adapterRouters, checkAdapterFieldMaps, HOSTBILL_FIELDS } from "../../src/webhooks/adapters/index.js";
import { upmindHook } from "../../src/webhooks/adapters/upmind.js";
import { normalizeDate } from "../../src/webhooks/adapters/panel-values.js";
import { signatureCandidates } from "../../src/webhooks/adapters/signatures.js";

function mapsFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "lb-maps-")), "maps.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

describe("field paths", () => {
  const body = { account: { id: 7, fields: [{ key: "host", value: "h" }, { key: "ip", value: "192.0.2.1" }], items: [{ id: "a" }, { id: "b" }] }, blank: "  " };

  it("reads dot paths, array indexes and [key=value] selections", () => {
    expect(getPath(body, "account.id")).toBe(7);
    expect(getPath(body, "account.items.1.id")).toBe("b");
    expect(getPath(body, "account.fields[key=ip].value")).toBe("192.0.2.1");
    expect(getPath(body, "account.fields[key=nope].value")).toBeUndefined();
    expect(getPath(body, "account.id.deeper")).toBeUndefined();
  });

  it("takes the first path that holds a value, treating blanks as absent", () => {
    expect(pick(body, ["blank", "missing", "account.id"])).toBe(7);
    expect(pick(body, [])).toBeUndefined();
  });
});

describe("ADAPTER_FIELD_MAPS_FILE", () => {
  it("overrides only the fields it names", () => {
    const r = checkAdapterFieldMaps({ ADAPTER_FIELD_MAPS_FILE: mapsFile({ hostbill: { "service.ip": "account.licence_ip" }, blesta: {} }) });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.maps.hostbill!["service.ip"]).toEqual(["account.licence_ip"]);
    expect(r.maps.hostbill!["service.id"]).toEqual(HOSTBILL_FIELDS["service.id"]);
  });

  it("reports unknown adapters and fields, bad paths and bad JSON, one line each", () => {
    const r = checkAdapterFieldMaps({
      ADAPTER_FIELD_MAPS_FILE: mapsFile({ whmcs: {}, hostbill: { "service.ipp": ["x"], "service.id": ["account..id"] } }),
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toHaveLength(3);
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ADAPTER_FIELD_MAPS_FILE: hostbill\.service\.id\.0: must be a dot path/),
        expect.stringMatching(/^ADAPTER_FIELD_MAPS_FILE: hostbill: unknown field "service\.ipp"/),
        expect.stringMatching(/^ADAPTER_FIELD_MAPS_FILE: \(root\): unknown adapter "whmcs"/),
      ]),
    );
    const notJson = checkAdapterFieldMaps({ ADAPTER_FIELD_MAPS_FILE: mapsFile("{nope") });
    expect(notJson.ok === false && notJson.problems[0]).toMatch(/is not valid JSON/);
    const missing = checkAdapterFieldMaps({ ADAPTER_FIELD_MAPS_FILE: "/nonexistent/maps.json" });
    expect(missing.ok === false && missing.problems[0]).toMatch(/cannot read .*ENOENT/);
  });

  it("stops adapterRouters with a ConfigError at start", () => {
    const config = {
      HOSTBILL_WEBHOOK_SECRET: "x".repeat(16),
      UPMIND_WEBHOOK_SECRET: undefined,
      BLESTA_WEBHOOK_TOKEN: undefined,
      BLESTA_ALLOWED_IPS: undefined,
      ADAPTER_FIELD_MAPS_FILE: mapsFile({ upmind: { nope: "a" } }),
      catalog: createCatalog({ products: {} }),
    };
    expect(() => adapterRouters(config, { accept: async (_s, items) => items.map(() => ({ status: "unknown_service" as const })), clock: systemClock, logger: silentLogger() })).toThrow(ConfigError);
  });
});

describe("panel spellings", () => {
  it("maps HostBill cycles, codes and words", () => {
    expect(["m", "q", "s", "a", "b", "t"].map(hostbillCycle)).toEqual(["monthly", "quarterly", "semiannually", "annually", "biennially", "triennially"]);
    expect(["Monthly", "Semi-Annually", "Annually", "Triennially"].map(hostbillCycle)).toEqual(["monthly", "semiannually", "annually", "triennially"]);
    expect(hostbillCycle("d")).toBeUndefined();
    expect(hostbillCycle("One Time")).toBeUndefined();
  });

  it("maps Blesta term + period", () => {
    expect(blestaCycle(1, "month")).toBe("monthly");
    expect(blestaCycle("6", "month")).toBe("semiannually");
    expect(blestaCycle(12, "month")).toBe("annually");
    expect(blestaCycle(2, "year")).toBe("biennially");
    expect(blestaCycle(1, "day")).toBeUndefined();
    expect(blestaCycle(0, "onetime")).toBeUndefined();
  });

  it("normalizes Upmind hook codes and panel dates", () => {
    expect(upmindHook("contract_product_activated_hook")).toBe("contract_product_activated");
    expect(upmindHook("Contract.Product.Renewed")).toBe("contract_product_renewed");
    expect(normalizeDate("2026-02-01 09:30:00")).toBe("2026-02-01T09:30:00Z");
    expect(normalizeDate("2026-02-01")).toBe("2026-02-01");
    expect(normalizeDate("0000-00-00 00:00:00")).toBeUndefined();
  });

  it("decodes hex and base64 signatures", () => {
    const digest = Buffer.alloc(32, 7);
    expect(signatureCandidates(digest.toString("hex")).some((c) => c.equals(digest))).toBe(true);
    expect(signatureCandidates(digest.toString("base64")).some((c) => c.equals(digest))).toBe(true);
    expect(signatureCandidates(`sha256=${digest.toString("hex")}`).some((c) => c.equals(digest))).toBe(true);
  });

  it("checks IPs against an allow-list of addresses and CIDR ranges", () => {
    const allowed = ipAllowList(["192.0.2.0/24", "198.51.100.7", "2001:db8::/32"]);
    expect(allowed("192.0.2.200")).toBe(true);
    expect(allowed("::ffff:192.0.2.1")).toBe(true);
    expect(allowed("198.51.100.7")).toBe(true);
    expect(allowed("198.51.100.8")).toBe(false);
    expect(allowed("2001:db8:1::5")).toBe(true);
    expect(allowed("2001:db9::1")).toBe(false);
    expect(allowed(undefined)).toBe(false);
  });
});
