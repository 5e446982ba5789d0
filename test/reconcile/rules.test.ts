import { describe, expect, it } from "vitest";
import { compareService, viewOf } from "../../src/reconcile/compare.js";
import { DRIFT_KINDS, type Repair, type SlotRule, type SlotView } from "../../src/reconcile/drift.js";
import type { Slot } from "../../src/reconcile/match.js";
import { ipDiffers } from "../../src/reconcile/rules/ip-differs.js";
import { missingUpstream } from "../../src/reconcile/rules/missing-upstream.js";
import { activeUpstream, heldAfterFailure, stoppedUpstream } from "../../src/reconcile/rules/status-differs.js";
import { SLOT_RULES, UNCLAIMED_RULES } from "../../src/reconcile/rules/table.js";
import { unknownLocally } from "../../src/reconcile/rules/unknown-locally.js";
import { variantDiffers } from "../../src/reconcile/rules/variant-differs.js";
import type { ListedLicense } from "../../src/reseller/answers.js";
import type { ServiceRow } from "../../src/store/store.js";
import type { ServiceStatus } from "../../src/vocabulary/service-statuses.js";
import { row } from "../intake/fixtures.js";

// Each drift rule on its own: what it finds, whether `fix` repairs it and what the item says.
// (test/reconcile/reconcile.test.ts shows the same rules end to end, against the sandbox.)

const IP = "203.0.113.10";
const MOVED = "198.51.100.10";

/** A service's slot of `type`, and the licence the reseller holds for it, if any (at the service's IP unless `how` says otherwise). */
function slot(status: ServiceStatus, license?: ListedLicense, over: Omit<Partial<Slot>, "svc"> & { svc?: Partial<ServiceRow> } = {}): Slot {
  const { svc, ...rest } = over;
  return { svc: row(status, svc), type: license?.type ?? "cpanel", license, how: license ? "ip" : undefined, ...rest };
}

/** What a rule sees of a service with that one slot. */
const alone = (s: Slot): SlotView => viewOf(s, [s]);

/** The item a rule makes of what it sees, as reconcile lists it, or undefined when it finds nothing. */
function judged(rule: SlotRule, view: SlotView) {
  const found = rule.detect(view);
  return found && { ...found, fixable: rule.fixable(view, found), fix: rule.fixText(view, found), repair: rule.fixable(view, found) ? rule.repair : undefined };
}

const cpanel = (over: Partial<ListedLicense> = {}): ListedLicense => ({ ip: IP, type: "cpanel", status: "active", ...over });

describe("missing_upstream", () => {
  it("a live service whose licence the reseller does not hold needs a purchase, which reconcile never makes", () => {
    expect(judged(missingUpstream, alone(slot("suspended")))).toEqual({
      expected: "suspended",
      actual: "absent",
      fixable: false,
      fix: `needs a purchase: register cpanel for ${IP} at the reseller (reconcile never buys)`,
      repair: undefined,
    });
  });

  it("a licence another service holds at the IP is theirs to sort out", () => {
    expect(judged(missingUpstream, alone(slot("active", undefined, { heldBy: "s9" })))?.fix).toBe(`the reseller's cpanel licence at ${IP} is service s9's; sort out which service owns it`);
  });

  it("a terminated or failed service's licence is expected to be absent", () => {
    expect(missingUpstream.detect(alone(slot("terminated")))).toBeUndefined();
    expect(missingUpstream.detect(alone(slot("failed")))).toBeUndefined();
  });
});

describe("status_differs", () => {
  it("a failed registration whose licence the reseller holds is a person's to keep or cancel", () => {
    expect(judged(heldAfterFailure, alone(slot("failed", cpanel({ status: undefined }))))).toEqual({
      expected: "absent",
      actual: "present",
      fixable: false,
      fix: "the registration failed yet the reseller has the licence: resend service.created (the bridge adopts it and buys nothing), or cancel it at the reseller",
      repair: undefined,
    });
  });

  it("an active service whose licence the reseller suspended is recorded as suspended", () => {
    expect(judged(stoppedUpstream, alone(slot("active", cpanel({ status: "Suspended by reseller" }))))).toEqual({
      expected: "active",
      actual: "suspended",
      fixable: true,
      fix: "record the service as suspended, as the reseller has it",
      repair: "record_suspended",
    });
  });

  it("an active service whose licence expired needs a renewal, which reconcile never makes", () => {
    expect(judged(stoppedUpstream, alone(slot("active", cpanel({ status: "Expired" }))))).toEqual({
      expected: "active",
      actual: "expired",
      fixable: false,
      fix: "the reseller has the licence expired: renew or reactivate it at the reseller (reconcile never buys)",
      repair: undefined,
    });
  });

  it("a licence the list shows no status for is not compared by status", () => {
    expect(stoppedUpstream.detect(alone(slot("active", cpanel({ status: " " }))))).toBeUndefined();
    expect(activeUpstream.detect(alone(slot("suspended", cpanel({ status: undefined }))))).toBeUndefined();
  });

  it("a suspended or terminated service's licence active upstream is suspended there", () => {
    expect(judged(activeUpstream, alone(slot("terminated", cpanel({ ip: MOVED }), { how: "bundle_key" })))).toEqual({
      expected: "suspended",
      actual: "active",
      fixable: true,
      fix: `suspend the cpanel licence at ${MOVED} at the reseller (the service is terminated)`,
      repair: "suspend_upstream",
    });
    expect(activeUpstream.detect(alone(slot("suspended", cpanel())))).toEqual({ expected: "suspended", actual: "active" });
  });

  it("a failed service's licence is only the failure's item, whatever its status, IP or core", () => {
    const view = alone(slot("failed", { ip: MOVED, type: "litespeed", status: "suspended", variant: "litespeed8" }, { how: "unique" }));
    expect(SLOT_RULES.filter((rule) => rule.detect(view)).map((rule) => rule.kind)).toEqual(["status_differs"]);
    expect(heldAfterFailure.detect(view)).toEqual({ expected: "absent", actual: "suspended" });
  });
});

describe("ip_differs", () => {
  it("a licence the reseller moved is recorded at its new IP", () => {
    expect(judged(ipDiffers, alone(slot("active", cpanel({ ip: MOVED }), { how: "bundle_key" })))).toEqual({
      expected: IP,
      actual: MOVED,
      fixable: true,
      fix: `record ${MOVED} as the service's IP (the reseller's licence is there)`,
      repair: "record_ip",
    });
  });

  it("a bundle whose licences are at different IPs upstream is left to a person", () => {
    const moved = slot("active", cpanel({ ip: MOVED }), { how: "bundle_key" });
    const stayed: Slot = { svc: moved.svc, type: "cloudlinux", license: { ip: IP, type: "cloudlinux", status: "active" }, how: "ip" };
    expect(judged(ipDiffers, viewOf(moved, [moved, stayed]))).toMatchObject({
      fixable: false,
      fix: `the licences of this bundle are at different IPs upstream (${MOVED}, ${IP}): change-ip them at the reseller, then run reconcile again`,
      repair: undefined,
    });
  });

  it("a bundle that moved together, one IP however written, is recorded", () => {
    const svc = row("active", { kind: "bundle", type: null, bundle: "cpanel-cloudlinux", ip: "2001:db8::1" });
    const slots: Slot[] = [
      { svc, type: "cpanel", license: cpanel({ ip: "2001:db8::10" }), how: "bundle_key" },
      { svc, type: "cloudlinux", license: { ip: "2001:0db8:0:0::10", type: "cloudlinux" }, how: "bundle_key" },
    ];
    expect(slots.map((s) => ipDiffers.fixable(viewOf(s, slots), ipDiffers.detect(viewOf(s, slots))!))).toEqual([true, true]);
  });

  it("a bundle with a licence not found upstream is not recorded at a new IP", () => {
    const moved = slot("active", cpanel({ ip: MOVED }), { how: "bundle_key" });
    const lost: Slot = { svc: moved.svc, type: "cloudlinux" };
    expect(judged(ipDiffers, viewOf(moved, [moved, lost]))).toMatchObject({ fixable: false, fix: expect.stringContaining(`(${MOVED})`) });
  });

  it("a licence at the service's IP has not moved", () => {
    expect(ipDiffers.detect(alone(slot("active", cpanel())))).toBeUndefined();
  });
});

describe("variant_differs", () => {
  const litespeed = (variant?: string): ListedLicense => ({ ip: IP, type: "litespeed", status: "active", ...(variant ? { variant } : {}) });

  it("a LiteSpeed licence the reseller moved to another core has its new core recorded", () => {
    expect(judged(variantDiffers, alone(slot("active", litespeed("litespeed8"), { svc: { type: "litespeed", variant: "litespeed4", upstream_variant: "litespeed4" } })))).toEqual({
      expected: "litespeed4",
      actual: "litespeed8",
      fixable: true,
      fix: "record litespeed8 as the licence's variant upstream",
      repair: "record_variant",
    });
  });

  it("expects the core recorded upstream, else the one ordered, else plain litespeed", () => {
    const expected = (svc: Partial<ServiceRow>) => variantDiffers.detect(alone(slot("suspended", litespeed("litespeedX"), { svc: { type: "litespeed", ...svc } })))?.expected;
    expect(expected({ variant: "litespeed4", upstream_variant: "litespeed8" })).toBe("litespeed8");
    expect(expected({ variant: "litespeed4" })).toBe("litespeed4");
    expect(expected({})).toBe("litespeed");
  });

  it("a licence listed without a core, at the core expected, or of a terminated service is not compared", () => {
    const svc = { type: "litespeed", variant: "litespeed4" };
    expect(variantDiffers.detect(alone(slot("active", litespeed(), { svc })))).toBeUndefined();
    expect(variantDiffers.detect(alone(slot("active", litespeed("litespeed4"), { svc })))).toBeUndefined();
    expect(variantDiffers.detect(alone(slot("terminated", litespeed("litespeed8"), { svc })))).toBeUndefined();
  });
});

describe("unknown_locally", () => {
  it("a licence no service accounts for is a person's to cancel or adopt, never bought", () => {
    const found = unknownLocally.detect({ ip: MOVED, type: "directadmin", status: "Suspended" })!;
    expect(found).toEqual({ expected: "absent", actual: "suspended" });
    expect(unknownLocally.fixable({ ip: MOVED, type: "directadmin" }, found)).toBe(false);
    expect(unknownLocally.fixText({ ip: MOVED, type: "directadmin" }, found)).toBe(
      "no service accounts for it: cancel it at the reseller, or send service.created for it (the bridge adopts it and buys nothing)",
    );
    expect(unknownLocally.detect({ ip: MOVED, type: "directadmin" })).toEqual({ expected: "absent", actual: "present" });
  });
});

describe("the rule table", () => {
  it("has a rule for every kind of drift", () => {
    const kinds = new Set([...SLOT_RULES, ...UNCLAIMED_RULES].map((rule) => rule.kind));
    expect(DRIFT_KINDS.filter((kind) => !kinds.has(kind))).toEqual([]);
  });

  it("lists a licence's items in the table's order, each fixable one with its repair", () => {
    const s = slot("active", { ip: MOVED, type: "litespeed", status: "suspended", variant: "litespeed8" }, { how: "bundle_key", svc: { type: "litespeed", variant: "litespeed4" } });
    const repairs: Repair[] = [];

    const items = compareService([s], repairs);

    expect(items.map((i) => [i.kind, i.expected, i.actual])).toEqual([
      ["ip_differs", IP, MOVED],
      ["status_differs", "active", "suspended"],
      ["variant_differs", "litespeed4", "litespeed8"],
    ]);
    expect(items[0]).toEqual({ service_id: "s1", ip: IP, kind: "ip_differs", provider: "reseller", type: "litespeed", expected: IP, actual: MOVED, fixable: true, fix: expect.any(String) });
    expect(repairs.map((r) => [r.item, r.action])).toEqual([
      [items[0], "record_ip"],
      [items[1], "record_suspended"],
      [items[2], "record_variant"],
    ]);
  });

  it("asks nothing of a pending service: its registration may or may not have bought the licence yet", () => {
    const repairs: Repair[] = [];
    expect(compareService([slot("pending"), slot("pending", cpanel({ ip: MOVED, status: "expired" }), { how: "unique" })], repairs)).toEqual([]);
    expect(repairs).toEqual([]);
  });
});
