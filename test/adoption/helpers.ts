import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startTestSandbox, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { startMailBridge, startTestSmtp, type TestSmtp } from "../helpers/smtp.js";
import { behindTheBridge } from "../reconcile/helpers.js";

/** The shipped products with the prices a live bridge reads for its plan (the sandbox's own, so amounts are checkable). */
export const PRICED_PRODUCTS = {
  billing_cycles: { monthly: 1, quarterly: 3, semiannually: 6, annually: 12, biennially: 24, triennially: 36 },
  products: {
    "12": { type: "cpanel", price_per_month: 15 },
    "13": { type: "litespeed", variant: "litespeed4", price_per_month: 10 },
    "14": { type: "litespeed", variant: "litespeed", price_per_month: 10 },
    "17": { type: "cloudlinux", price_per_month: 12 },
    "19": { type: "plesk" },
    "20": { bundle: "cpanel-cloudlinux", price_per_month: 25 },
  },
};

export interface AdoptionWorld {
  sb: TestSandbox;
  bridge: TestBridge;
  smtp: TestSmtp;
}

/** A sandbox, an SMTP server and a bridge that mails through it with PRICED_PRODUCTS, fresh for every test. */
export function useAdoptionWorld(): () => AdoptionWorld {
  let world: AdoptionWorld | undefined;
  let dir: string | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-adopt-"));
    const products = join(dir, "products.json");
    writeFileSync(products, JSON.stringify(PRICED_PRODUCTS));
    const sb = await startTestSandbox();
    const smtp = await startTestSmtp();
    const bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url, PRODUCTS_FILE: products } });
    world = { sb, bridge, smtp };
  });
  afterEach(async () => {
    const w = world;
    world = undefined;
    try {
      await w?.bridge.close();
      await w?.smtp.close();
      await w?.sb.close();
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });
  return () => {
    if (!world) throw new Error("no adoption world outside a test");
    return world;
  };
}

/** Licences bought at the reseller behind the bridge's back: the running book a company brings. */
export async function holdUpstream(sb: TestSandbox, ip: string, type: "cpanel" | "litespeed" | "cloudlinux", options: { variant?: "litespeed8"; suspended?: boolean } = {}) {
  const v1 = behindTheBridge(sb);
  try {
    await v1.register({ ip, type, billingcycle: 1 });
    if (options.variant) await v1.changeCore({ ip, old_type: "litespeed", new_type: options.variant });
    if (options.suspended) await v1.suspend({ ip, type });
  } finally {
    await v1.close();
  }
}

/** An import row with the panel's usual columns; override any. */
export function row(over: Record<string, unknown>): Record<string, unknown> {
  return {
    package_identifier: "12",
    customer_email: "ann@example.com",
    customer_name: "Ann Example",
    billing_cycle: "monthly",
    next_due_date: "2030-01-01",
    status: "active",
    ...over,
  };
}
