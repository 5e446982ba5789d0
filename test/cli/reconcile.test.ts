import { describe, expect, it } from "vitest";
import type { ReconcileResult } from "../../src/reconcile/reconcile.js";
import { orderActive, untilIdle, usePairPerFile } from "../helpers/e2e-harness.js";
import { behindTheBridge, purchases } from "../reconcile/helpers.js";
import { runCli } from "./helpers.js";

/** The CLI's reconcile against the same reseller and database as a running bridge; the tests build on each other. */
describe("reconcile command", () => {
  let env: Record<string, string>;
  let id: string;

  const pair = usePairPerFile({
    async setup({ sb, bridge }) {
      env = bridge.env;
      id = await orderActive(bridge, { product_id: "12", ip: "203.0.113.150" });
      await untilIdle(bridge);
      await behindTheBridge(sb).suspend({ ip: "203.0.113.150", type: "cpanel" });
    },
  });

  it("reports drift it could repair and exits 1 without --fix", async () => {
    const { bridge } = pair();
    const run = await runCli(["reconcile", "--json"], env);
    expect(run.code).toBe(1);
    expect(run.json<ReconcileResult>()).toEqual({
      drift: [
        { kind: "status_differs", provider: "reseller", service_id: id, ip: "203.0.113.150", type: "cpanel", expected: "active", actual: "suspended", fixable: true, fix: expect.any(String) },
      ],
      fixed: [],
      manual: [],
    });
    expect(run.stderr.trim()).toBe("license-bridge: 1 drift item(s) remain");
    expect((await bridge.service.services.get(id))?.status).toBe("active");
  });

  it("repairs it with --fix, buying nothing, and exits 0", async () => {
    const { sb, bridge } = pair();
    const before = purchases(sb);
    const run = await runCli(["reconcile", "--fix", "--json"], env);
    expect(run.code).toBe(0);
    expect(run.json<ReconcileResult>().fixed).toEqual([expect.objectContaining({ kind: "status_differs", service_id: id })]);
    expect((await bridge.service.services.get(id))?.status).toBe("suspended");
    expect(purchases(sb)).toEqual(before);
  });

  it("lists a licence no service accounts for for a person and exits 1, even with --fix", async () => {
    const { sb } = pair();
    await behindTheBridge(sb).register({ ip: "203.0.113.151", type: "plesk", billingcycle: 1 });
    const before = purchases(sb);
    const run = await runCli(["reconcile", "--fix"], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("for a person (1):");
    expect(run.stdout).toMatch(/unknown_locally\s+-\s+203\.0\.113\.151\s+plesk/);
    expect(run.stderr.trim()).toBe("license-bridge: 1 drift item(s) remain, 1 need a person");
    expect(purchases(sb)).toEqual(before);
  });
});
