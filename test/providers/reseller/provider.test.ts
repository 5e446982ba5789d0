import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type RunningSandbox, type Sandbox } from "../../../src/sandbox/app.js";
import { NotFoundError } from "../../../src/reseller/errors.js";
import { createUpstream } from "../../../src/reseller/upstream.js";
import { createV1Client, type V1Client } from "../../../src/reseller/v1.js";
import { createV2Client, type V2Client } from "../../../src/reseller/v2.js";
import { createResellerProvider } from "../../../src/providers/reseller/provider.js";
import type { LicenceProvider } from "../../../src/providers/port.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../../src/vocabulary/sandbox-identity.js";

// The reseller behind the provider port, against its sandbox over loopback: what the lifecycle
// asks (buy, find, hold, suspend, change) answered in the port's words, each one the Upstream's
// call, "License already exists" and a 404 as values.

const IP = "203.0.113.40";
const licence = (type: string, variant: string | null = null) => ({ kind: "licence" as const, type, bundle: null, variant });
const bundle = (id: string) => ({ kind: "bundle" as const, type: null, bundle: id });

let sandbox: Sandbox;
let running: RunningSandbox;
let v1: V1Client;
let v2: V2Client;
let reseller: LicenceProvider;

beforeAll(async () => {
  sandbox = createSandbox();
  running = await sandbox.listen(0);
  v1 = createV1Client({ baseUrl: running.apiUrl, token: DEFAULT_SANDBOX_TOKENS.reseller });
  v2 = createV2Client({ baseUrl: running.legacyUrl, token: DEFAULT_SANDBOX_TOKENS.legacy });
  reseller = createResellerProvider(createUpstream("v1", v1, null));
});
afterAll(async () => {
  await v1.close();
  await v2.close();
  await running.close();
});
beforeEach(() => sandbox.reset());

describe("what the reseller sells", () => {
  it("a licence is one part, sold as its type", () => {
    expect(reseller.partsOf(licence("cpanel"))).toEqual([{ sku: "cpanel", type: "cpanel" }]);
  });

  it("a bundle's parts are its components, read from its id", () => {
    expect(reseller.partsOf(bundle("cpanel-cloudlinux"))).toEqual([
      { sku: "cpanel", type: "cpanel" },
      { sku: "cloudlinux", type: "cloudlinux" },
    ]);
  });

  it("cPanel comes with its free companions, alone or in a bundle; nothing else does", () => {
    expect(reseller.companionsOf(licence("cpanel"))).toEqual(["softaculous", "sitepad", "ssl"]);
    expect(reseller.companionsOf(bundle("cpanel-litespeed"))).toEqual(["softaculous", "sitepad", "ssl"]);
    expect(reseller.companionsOf(licence("plesk"))).toEqual([]);
  });

  it("a LiteSpeed licence is registered plain and held as its product's variant; no other product has variants", () => {
    expect(reseller.registeredVariant(licence("litespeed", "litespeed8"))).toBe("litespeed");
    expect(reseller.variantOf(licence("litespeed", "litespeed8"))).toBe("litespeed8");
    expect(reseller.variantOf(licence("litespeed"))).toBe("litespeed");
    expect(reseller.registeredVariant(licence("cpanel"))).toBeUndefined();
    expect(reseller.variantOf(bundle("cpanel-litespeed"))).toBeUndefined();
  });

  it("v1 declares a renewal bought, native suspension, a change of IP in one call, LiteSpeed cores, a list with status and expiry, bundles", () => {
    expect(reseller.capabilities).toEqual({
      renewal: "purchase",
      suspension: "native",
      unsuspendBills: false,
      changeIp: "atomic",
      changeProduct: "litespeed-core",
      list: { status: true, expiry: true },
      bundles: true,
      acquireIsIdempotent: false,
    });
  });
});

describe("buying", () => {
  it("a licence bought answers its expiry, and is the reseller's one purchase", async () => {
    const purchase = await reseller.buy(IP, licence("cpanel"), 12);
    const held = sandbox.licenses().find((l) => l.type === "cpanel")!;
    expect(purchase).toEqual({ bought: { expiresAt: Date.parse(held.expires_at) } });
    expect(sandbox.ledger()).toMatchObject([{ op: "register", ip: IP, type: "cpanel", months: 12 }]);
  });

  it("a licence the reseller already holds is an answer, already held, and nothing is bought", async () => {
    await reseller.buy(IP, licence("cpanel"), 12);
    expect(await reseller.buy(IP, licence("cpanel"), 12)).toEqual({ alreadyHeld: true });
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("a bundle is bought in one call, answering its key", async () => {
    const purchase = await reseller.buy(IP, bundle("cpanel-cloudlinux"), 1);
    expect(purchase).toEqual({ bought: { bundleKey: expect.any(String), expiresAt: expect.any(Number) } });
    expect(sandbox.ledger()).toMatchObject([{ op: "bundle" }]);
  });

  it("a bundle whose licences are already held is an answer, already held", async () => {
    await reseller.buy(IP, licence("cpanel"), 1);
    expect(await reseller.buy(IP, bundle("cpanel-cloudlinux"), 1)).toEqual({ alreadyHeld: true });
  });

  it("one part of a bundle is bought on its own as its type", async () => {
    await reseller.buyPart(IP, { sku: "cloudlinux", type: "cloudlinux" }, 3);
    expect(sandbox.ledger()).toMatchObject([{ op: "register", type: "cloudlinux", months: 3 }]);
  });

  it("the fence runs right before the send, and a throw there sends nothing", async () => {
    const fence = async () => {
      throw new Error("lease lost");
    };
    await expect(reseller.buy(IP, licence("cpanel"), 1, { beforeSend: fence })).rejects.toThrow("lease lost");
    expect(sandbox.requests()).toEqual([]);
  });
});

describe("finding a purchase after a lost answer", () => {
  it("nothing at the IP: not found", async () => {
    expect(await reseller.findPurchase(IP, licence("cpanel"))).toBeUndefined();
  });

  it("a licence: the paid one of its type, never a free companion of that type", async () => {
    await reseller.buy(IP, licence("cpanel"), 1);
    expect(await reseller.findPurchase(IP, licence("softaculous"))).toBeUndefined();
    expect(await reseller.findPurchase(IP, licence("cpanel"))).toMatchObject([{ sku: "cpanel", state: "active" }]);
  });

  it("a bundle: the licences carrying a bundle key", async () => {
    const purchase = await reseller.buy(IP, bundle("cpanel-cloudlinux"), 1);
    const found = await reseller.findPurchase(IP, bundle("cpanel-cloudlinux"));
    expect(found?.length).toBeGreaterThan(0);
    expect(found?.every((h) => h.bundleKey === ("bought" in purchase ? purchase.bought.bundleKey : ""))).toBe(true);
  });

  it("a bundle without a key: its components, once every one of them is there", async () => {
    await reseller.buyPart(IP, { sku: "cpanel", type: "cpanel" }, 1);
    expect(await reseller.findPurchase(IP, bundle("cpanel-cloudlinux"))).toBeUndefined();
    await reseller.buyPart(IP, { sku: "cloudlinux", type: "cloudlinux" }, 1);
    expect((await reseller.findPurchase(IP, bundle("cpanel-cloudlinux")))?.map((h) => h.sku).sort()).toEqual(["cloudlinux", "cpanel"]);
  });
});

describe("holdings", () => {
  it("at an IP: the paid licence and its free companions, marked", async () => {
    await reseller.buy(IP, licence("cpanel"), 1);
    const at = await reseller.holdingsAt(IP);
    expect(at.filter((h) => !h.free).map((h) => h.sku)).toEqual(["cpanel"]);
    expect(at.filter((h) => h.free).map((h) => h.sku).sort()).toEqual(["sitepad", "softaculous", "ssl"]);
    expect(await reseller.holdingsAt("203.0.113.41")).toEqual([]);
  });

  it("holdings asked about some types are the licences of those types at the IP only", async () => {
    await reseller.buy(IP, licence("cpanel"), 1);
    await reseller.buyPart(IP, { sku: "cloudlinux", type: "cloudlinux" }, 1);
    expect((await reseller.holdingsAt(IP, { skus: ["cloudlinux"] })).map((h) => h.sku)).toEqual(["cloudlinux"]);
    expect((await reseller.holdingsAt(IP, { skus: ["cpanel", "cloudlinux"] })).map((h) => h.sku).sort()).toEqual(["cloudlinux", "cpanel"]);
  });

  it("the whole list, in the same words", async () => {
    await reseller.buy(IP, licence("plesk"), 1);
    await reseller.buy("203.0.113.41", licence("litespeed"), 1);
    expect(await reseller.list()).toEqual([
      expect.objectContaining({ provider: "reseller", ip: IP, sku: "plesk", state: "active", expiresAt: expect.any(Number) }),
      expect.objectContaining({ ip: "203.0.113.41", sku: "litespeed", variant: "litespeed", detail: "variant litespeed" }),
    ]);
  });
});

describe("changes", () => {
  it("suspend, unsuspend and terminate are done, the state follows, and a termination suspends", async () => {
    await reseller.buy(IP, licence("plesk"), 1);
    const held = { ip: IP, sku: "plesk" };
    expect(await reseller.suspend(held)).toEqual({ done: true });
    expect((await reseller.holdingsAt(IP))[0]?.state).toBe("suspended");
    expect(await reseller.unsuspend(held)).toEqual({ done: true });
    expect((await reseller.holdingsAt(IP))[0]?.state).toBe("active");
    expect(await reseller.terminate(held)).toEqual({ done: true });
    expect((await reseller.holdingsAt(IP))[0]?.state).toBe("suspended");
  });

  it("a status change of a licence the reseller does not hold answers not held, with its refusal", async () => {
    for (const change of ["suspend", "unsuspend", "terminate"] as const) {
      const outcome = await reseller[change]({ ip: IP, sku: "plesk" });
      expect(outcome.done).toBe(false);
      expect(!outcome.done && outcome.notHeld).toBeInstanceOf(NotFoundError);
    }
  });

  it("a renewal answers the term's new end", async () => {
    await reseller.buy(IP, licence("plesk"), 1);
    const { expiresAt } = await reseller.renew({ ip: IP, sku: "plesk" }, 3);
    expect(expiresAt).toBe(Date.parse(sandbox.licenses()[0]!.expires_at));
    expect(sandbox.ledger().map((c) => c.op)).toEqual(["register", "renew"]);
  });

  it("a LiteSpeed licence moves to another core in place, and its holding shows it", async () => {
    await reseller.buy(IP, licence("litespeed"), 1);
    await reseller.changeVariant(IP, "litespeed", "litespeed8");
    expect(await reseller.holdingsAt(IP)).toMatchObject([{ sku: "litespeed", variant: "litespeed8" }]);
  });

  it("a change of IP moves the licence in one call", async () => {
    await reseller.buy(IP, licence("plesk"), 1);
    await reseller.changeIp({ ip: IP, sku: "plesk" }, "203.0.113.41");
    expect(sandbox.licenses()).toMatchObject([{ ip: "203.0.113.41", type: "plesk" }]);
  });

  it("the install command is the reseller's", async () => {
    await reseller.buy(IP, licence("plesk"), 1);
    expect(await reseller.installCommand({ ip: IP, sku: "plesk" })).toBe((await v1.installCommand({ ip: IP, type: "plesk" })).command);
  });
});

describe("the reseller over v2.0", () => {
  let legacy: LicenceProvider;
  beforeAll(() => {
    legacy = createResellerProvider(createUpstream("v2", v1, v2));
  });

  it("sells no bundles, and says so", () => {
    expect(legacy.capabilities.bundles).toBe(false);
  });

  it("a licence already held is an answer there too", async () => {
    await legacy.buy(IP, licence("cpanel"), 12);
    expect(await legacy.buy(IP, licence("cpanel"), 12)).toEqual({ alreadyHeld: true });
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("an operation v2.0 lacks is refused, naming the setting, and nothing is sent", async () => {
    await expect(legacy.suspend({ ip: IP, sku: "cpanel" })).rejects.toThrow(/RESELLER_PROTOCOL=v2: the reseller's v2.0 interface has no suspend operation/);
    await expect(legacy.buy(IP, bundle("cpanel-cloudlinux"), 1)).rejects.toThrow(/no bundle operation/);
    expect(sandbox.requests()).toEqual([]);
  });
});
