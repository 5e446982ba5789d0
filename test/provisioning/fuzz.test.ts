import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PROVISIONING_CALLS } from "../../src/provisioning/provisioning.js";
import { TEST_PROVISIONING_TOKEN } from "../helpers/bridge.js";
import { rowCounts, usePairPerFile } from "../helpers/e2e-harness.js";

/**
 * Property: whatever parameters a panel sends, the provisioning API never answers 5xx, and a
 * refused call (4xx) stores nothing. The job runner is stopped and PROVISION_WAIT_SECONDS is 0, so
 * only the intake writes while the property runs (an accepted call answers 202 at once).
 */

const RUNS = { numRuns: Number(process.env.FUZZ_RUNS ?? 150), interruptAfterTimeLimit: 20_000 } as const;

let known: { service_identifier: string; license_key: string };

const pair = usePairPerFile({
  env: { PROVISION_WAIT_SECONDS: "0" },
  async setup({ bridge }) {
    const created = await bridge.provision("create", { service_identifier: "fz-known", package_identifier: "13", ip: "203.0.113.150" });
    known = { service_identifier: "fz-known", license_key: created.body.license_key as string };
    await bridge.service.runner.stop(0);
  },
});

const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "12",
    "13",
    "15",
    "20",
    "999",
    "fz-known",
    "fz-new",
    "203.0.113.151",
    "2001:db8::151",
    "::ffff:203.0.113.152",
    "127.0.0.1",
    "10.0.0.1",
    "203.0.113.256",
    "monthly",
    "36",
    "7",
    "2026-02-31",
    "2030-01-01 00:00:00",
    "x@example.com",
    "Ann\u0000",
    "lb_000000000000000000000000",
    "constructor",
    "__proto__",
    "a".repeat(300),
  ),
);

const KEYS = [
  "service_identifier",
  "package_identifier",
  "ip",
  "new_ip",
  "license_key",
  "customer_email",
  "customer_name",
  "billing_cycle",
  "billing_cycle_months",
  "next_due_date",
  "constructor",
  "__proto__",
];

const params = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 8 });

describe("fuzz: provisioning API parameters", () => {
  it("never answers 5xx, and a refusal stores nothing", async () => {
    const { bridge } = pair();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PROVISIONING_CALLS),
        params,
        fc.boolean(),
        fc.constantFrom("form", "json", "query") as fc.Arbitrary<"form" | "json" | "query">,
        async (call, p, useKnown, as) => {
          const sent = useKnown && call !== "create" ? { ...p, license_key: known.license_key } : p;
          const before = await rowCounts(bridge);
          const services = (await bridge.service.services.list()).length;
          const res = await bridge.provision(call, sent, { as });
          const context = `${call} ${as} ${JSON.stringify(sent).slice(0, 300)} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
          expect(res.status, context).toBeLessThan(500);
          expect(res.body.success, context).toBe(res.status === 200);
          if (res.status >= 400) {
            expect(res.body.code, context).toEqual(expect.any(String));
            expect(await rowCounts(bridge), context).toEqual(before);
            expect((await bridge.service.services.list()).length, context).toBe(services);
          }
        },
      ),
      RUNS,
    );
  });

  it("a wrong token never reaches the intake, whatever the parameters", async () => {
    const { bridge } = pair();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROVISIONING_CALLS), params, async (call, p) => {
        const before = await rowCounts(bridge);
        const res = await bridge.provision(call, p, { token: `${TEST_PROVISIONING_TOKEN}-not` });
        expect(res.status).toBe(401);
        expect(await rowCounts(bridge)).toEqual(before);
      }),
      { numRuns: 30 },
    );
  });
});
