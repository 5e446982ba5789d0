import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/catalog.js";
import { JobBlockedError } from "../../../src/jobs/errors.js";
import { createClnProvider } from "../../../src/providers/cln/index.js";
import type { LicenceProvider } from "../../../src/providers/port.js";
import { rejection } from "../../reseller/helpers.js";
import { CLOUDLINUX, IMUNIFY_30, IMUNIFY_SINGLE, IP, NEW_IP, useClnSandbox } from "./helpers.js";

const catalog = parseCatalog({
  billing_cycles: { monthly: 1 },
  products: {
    "41": { provider: "cln", type: "cloudlinux", cln_type: CLOUDLINUX },
    "42": { provider: "cln", type: "imunify360", cln_type: IMUNIFY_SINGLE, install_command: "bash i360deploy.sh # {ip}" },
  },
});
if (!catalog.ok) throw new Error(catalog.problems.join("\n"));
const CLOUDLINUX_PRODUCT = { kind: "licence", type: "cloudlinux", sku: String(CLOUDLINUX), product_id: "41" } as const;

describe("CLN as a licence provider", () => {
  const h = useClnSandbox();
  const provider = (): LicenceProvider => createClnProvider(h().client(), { catalog: () => catalog.catalog });
  const held = (ip = IP, type = CLOUDLINUX) => ({ ip, sku: String(type) });

  it("buys with register, and a register sent again answers the licence already there: bought once", async () => {
    expect(await provider().buy(IP, CLOUDLINUX_PRODUCT, 1)).toEqual({ bought: {} });
    expect(await provider().buy(IP, CLOUDLINUX_PRODUCT, 1)).toEqual({ bought: {} });
    expect(h().sandbox.ledger()).toMatchObject([{ op: "register", ip: IP, type: CLOUDLINUX }]);
  });

  it("a licence another customer holds is already held, and not among this account's holdings", async () => {
    h().sandbox.holdByAnother(IP, CLOUDLINUX);
    expect(await provider().buy(IP, CLOUDLINUX_PRODUCT, 1)).toEqual({ alreadyHeld: true });
    expect(await provider().holdingsAt(IP)).toEqual([]);
  });

  it("holdings asked about some types are the licences of those types at the IP only", async () => {
    await provider().buy(IP, CLOUDLINUX_PRODUCT, 1);
    await provider().buyPart(IP, { sku: String(IMUNIFY_SINGLE), type: "imunify360" }, 1);
    expect(await provider().holdingsAt(IP, { skus: [String(IMUNIFY_SINGLE)] })).toMatchObject([{ sku: String(IMUNIFY_SINGLE) }]);
    expect(await provider().holdingsAt(IP)).toHaveLength(2);
  });

  it("after a lost register answer, finds the licence by server?ip", async () => {
    h().sandbox.setFaults({ dropNext: 1 });
    expect(await rejection(provider().buy(IP, CLOUDLINUX_PRODUCT, 1))).toMatchObject({ mayHaveTakenEffect: true });
    expect(await provider().findPurchase(IP, CLOUDLINUX_PRODUCT)).toMatchObject([{ provider: "cln", ip: IP, sku: String(CLOUDLINUX), type: "cloudlinux", state: "active" }]);
    expect(await provider().findPurchase(NEW_IP, CLOUDLINUX_PRODUCT)).toBeUndefined();
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("a success: false answer is an error carrying CLN's message, never a purchase", async () => {
    h().sandbox.failNextRegister("Registration is closed for this account");
    const error = (await rejection(provider().buy(IP, CLOUDLINUX_PRODUCT, 1))) as Error;
    expect(error.message).toContain("Registration is closed for this account");
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("suspends by remove, again after a lost answer as well; unsuspends by register", async () => {
    await provider().buy(IP, CLOUDLINUX_PRODUCT, 1);
    expect(await provider().suspend(held())).toEqual({ done: true });
    expect(await provider().suspend(held())).toEqual({ done: true });
    expect(h().sandbox.licenses()).toEqual([]);

    expect(await provider().unsuspend(held())).toEqual({ done: true });
    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, type: CLOUDLINUX }]);
  });

  it("terminates by remove; a licence CLN does not have is not held", async () => {
    await provider().buy(IP, CLOUDLINUX_PRODUCT, 1);
    expect(await provider().terminate(held())).toEqual({ done: true });
    expect(await provider().terminate(held())).toMatchObject({ done: false });
  });

  it("changes the IP by registering the new one before removing the old: never without a licence", async () => {
    await provider().buy(IP, CLOUDLINUX_PRODUCT, 1);
    await provider().changeIp(held(), NEW_IP);
    expect(h().sandbox.timeline().map((e) => [e.event, e.ip])).toEqual([
      ["acquired", IP],
      ["acquired", NEW_IP],
      ["released", IP],
    ]);
  });

  it("converts an Imunify licence in place where CLN offers it; CLN's refusal blocks with the old licence standing", async () => {
    await provider().buy(IP, { kind: "licence", type: "imunify360", sku: String(IMUNIFY_SINGLE) }, 1);
    expect(provider().changesProductInPlace(String(IMUNIFY_SINGLE), String(IMUNIFY_30))).toBe(true);
    expect(provider().changesProductInPlace(String(CLOUDLINUX), String(IMUNIFY_30))).toBe(false);

    await provider().changeProduct(held(IP, IMUNIFY_SINGLE), { sku: String(IMUNIFY_30), type: "imunify360" });
    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, type: IMUNIFY_30 }]);
    // Asked again (a repeat after a lost answer): the new type is there, done.
    await provider().changeProduct(held(IP, IMUNIFY_SINGLE), { sku: String(IMUNIFY_30), type: "imunify360" });

    const refused = await rejection(provider().changeProduct(held(NEW_IP, IMUNIFY_SINGLE), { sku: String(IMUNIFY_30), type: "imunify360" }));
    expect(refused).toBeInstanceOf(JobBlockedError);
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("the install command is the catalogue product's template with the IP, else CloudLinux's guide's", async () => {
    expect(await provider().installCommand(held(IP, IMUNIFY_SINGLE), { kind: "licence", type: "imunify360", product_id: "42" })).toBe(`bash i360deploy.sh # ${IP}`);
    expect(await provider().installCommand(held(), CLOUDLINUX_PRODUCT)).toContain("cldeploy -i");
  });
});
