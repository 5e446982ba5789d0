import { describe, expect, it } from "vitest";
import { eachPage, type AdoptedService, type IntakeView, type NewService, type ServiceRow } from "../../src/store/store.js";
import { describeEachStore } from "../helpers/stores.js";

// Issue 36: a service names who sold its licence (provider), what that provider sold (sku:
// Manage2's package id, CLN's type number; none for the reseller, whose type or bundle says it)
// and the provider's own id of the licence (upstream_id: Manage2's licenseid). Every write that
// names none of them is the reseller's, as every service was before; the IP's holders carry them
// so the one-licence-per-service rule can key on (provider, IP, what is bought); the licence
// listing filters by provider. On both stores.

function newService(serviceId: string, ip: string, over: Partial<NewService> = {}): NewService {
  return {
    service_id: serviceId,
    product_id: "12",
    kind: "licence",
    type: "cpanel",
    bundle: null,
    variant: null,
    ip,
    billing_cycle: "monthly",
    months: 1,
    status: "pending",
    customer_email: `${serviceId}@example.com`,
    customer_name: null,
    paid_until: null,
    order_event_id: null,
    ...over,
  };
}

/** A Manage2 cPanel licence: package 12345, Manage2's licence id L-<n>. */
const manage2 = { provider: "manage2", sku: "12345" } as const;
/** A CLN CloudLinux licence: CLN type 1. */
const cln = { provider: "cln", sku: "1", type: "cloudlinux" } as const;

describeEachStore("licence providers in the store on $name", {}, ({ store }) => {
  /** An accepted order writing `row`; `seen` gets the view decide was shown (the IP's holders). */
  const order = async (row: NewService, seen: IntakeView[] = []) => {
    const r = await store.events.accept(
      "billing",
      [{ webhookId: `order-${row.service_id}`, event: { type: "service.created", service: { id: row.service_id } }, queueKey: `svc:${row.service_id}`, ip: row.ip }],
      (_item, view) => {
        seen.push(view);
        return { write: true, result: "ok", event: { type: "service.created", serviceId: row.service_id, payload: "{}", outcome: null, detail: null }, order: { insert: row } };
      },
      () => true,
    );
    expect(r.stored).toBe(true);
  };
  const ids = (rows: { service_id: string }[]) => rows.map((r) => r.service_id);
  const walk = async (query: { provider?: ServiceRow["provider"]; status?: ServiceRow["status"]; q?: string }, limit: number) => {
    const rows: ServiceRow[] = [];
    for await (const page of eachPage((cursor) => store.services.page({ ...query, limit, cursor }))) rows.push(...page.items);
    return rows;
  };

  describe("the row", () => {
    it("is the reseller's, with no sku and no upstream id, when its writer names no provider", async () => {
      await order(newService("s1", "203.0.113.1"));
      expect(await store.services.get("s1")).toMatchObject({ provider: "reseller", sku: null, upstream_id: null });
    });

    it("keeps the provider, sku and upstream id it is written with", async () => {
      await order(newService("m1", "203.0.113.1", manage2));
      const adopted: AdoptedService = {
        ...newService("c1", "203.0.113.2", { ...cln, status: "active" }),
        upstream_id: "cln-77",
        expires_at: null,
        upstream_variant: null,
        bundle_key: null,
        companions: "[]",
      };
      expect(await store.adoption.insert([{ service: adopted, history: [] }], () => undefined)).toMatchObject({ inserted: ["c1"] });
      expect(await store.services.get("m1")).toMatchObject({ provider: "manage2", sku: "12345", upstream_id: null, type: "cpanel" });
      expect(await store.services.get("c1")).toMatchObject({ provider: "cln", sku: "1", upstream_id: "cln-77", type: "cloudlinux", status: "active" });
    });

    it("takes the provider, sku and upstream id in a change, and clears them", async () => {
      await order(newService("m1", "203.0.113.1", manage2));
      await store.services.change({ serviceId: "m1", patch: { upstream_id: "L-4242", status: "active" } });
      expect(await store.services.get("m1")).toMatchObject({ provider: "manage2", sku: "12345", upstream_id: "L-4242", status: "active" });
      await store.services.change({ serviceId: "m1", patch: { provider: "reseller", sku: null, upstream_id: null } });
      expect(await store.services.get("m1")).toMatchObject({ provider: "reseller", sku: null, upstream_id: null, status: "active" });
    });

    it("is a brief with its provider, sku and upstream id", async () => {
      await order(newService("m1", "203.0.113.1", { ...manage2 }));
      await store.services.change({ serviceId: "m1", patch: { upstream_id: "L-1" } });
      await order(newService("r1", "203.0.113.2"));
      expect(await store.services.briefs(undefined, 10)).toEqual([
        expect.objectContaining({ service_id: "m1", provider: "manage2", sku: "12345", upstream_id: "L-1" }),
        expect.objectContaining({ service_id: "r1", provider: "reseller", sku: null, upstream_id: null }),
      ]);
    });
  });

  describe("the holders of an IP", () => {
    it("carry their provider and sku, for the intake's one-licence-per-service rule", async () => {
      const ip = "203.0.113.9";
      await order(newService("r1", ip));
      await order(newService("m1", ip, manage2));
      const seen: IntakeView[] = [];
      await order(newService("c1", ip, cln), seen);
      const holders = seen[0]!.holders.map((h) => ({ service_id: h.service_id, provider: h.provider, sku: h.sku, type: h.type }));
      expect(holders.sort((a, b) => a.service_id.localeCompare(b.service_id))).toEqual([
        { service_id: "m1", provider: "manage2", sku: "12345", type: "cpanel" },
        { service_id: "r1", provider: "reseller", sku: null, type: "cpanel" },
      ]);
    });

    it("carry their provider and sku to adoption's refusal", async () => {
      const ip = "203.0.113.9";
      await order(newService("m1", ip, manage2));
      const shown: { provider: string; sku: string | null }[] = [];
      const adopted: AdoptedService = { ...newService("r2", ip), expires_at: null, upstream_variant: null, bundle_key: null, companions: "[]" };
      await store.adoption.insert([{ service: adopted, history: [] }], (_w, holders) => {
        shown.push(...holders.map((h) => ({ provider: h.provider, sku: h.sku })));
        return undefined;
      });
      expect(shown).toEqual([{ provider: "manage2", sku: "12345" }]);
    });
  });

  describe("the services recording a licence id", () => {
    it("are every live service of that provider recording it, wherever its IP, by service id", async () => {
      await order(newService("m2", "203.0.113.2", manage2));
      await order(newService("m1", "203.0.113.1", manage2));
      await store.services.change({ serviceId: "m1", patch: { upstream_id: "4242", status: "suspended" } });
      await store.services.change({ serviceId: "m2", patch: { upstream_id: "4242" } });

      const holders = await store.services.byLicenceId("manage2", "4242");

      expect(holders.map((h) => [h.service_id, h.status, h.ip, h.upstream_id])).toEqual([
        ["m1", "suspended", "203.0.113.1", "4242"],
        ["m2", "pending", "203.0.113.2", "4242"],
      ]);
    });

    it("leave out terminated services, another provider's same id and other ids", async () => {
      await order(newService("m1", "203.0.113.1", manage2));
      await store.services.change({ serviceId: "m1", patch: { upstream_id: "4242", status: "terminated" } });
      await order(newService("c1", "203.0.113.2", cln));
      await store.services.change({ serviceId: "c1", patch: { upstream_id: "4242", status: "active" } });
      await order(newService("m3", "203.0.113.3", manage2));
      await store.services.change({ serviceId: "m3", patch: { upstream_id: "4243", status: "active" } });
      await order(newService("m4", "203.0.113.4", manage2));

      expect(await store.services.byLicenceId("manage2", "4242")).toEqual([]);
      expect((await store.services.byLicenceId("cln", "4242")).map((h) => h.service_id)).toEqual(["c1"]);
    });

    it("follow a service ordered again after its termination", async () => {
      await order(newService("m1", "203.0.113.1", manage2));
      await store.services.change({ serviceId: "m1", patch: { upstream_id: "4242", status: "terminated" } });
      await store.services.change({ serviceId: "m1", patch: { status: "pending" } });

      expect((await store.services.byLicenceId("manage2", "4242")).map((h) => h.service_id)).toEqual(["m1"]);
    });
  });

  describe("the services holding a provider's licence of a SKU at an IP", () => {
    it("are the live services of that provider, SKU and IP other than the one asking, by service id", async () => {
      await order(newService("c2", "203.0.113.1", cln));
      await order(newService("c1", "203.0.113.1", { ...cln, sku: "1002" }));
      await order(newService("c3", "203.0.113.2", cln));
      await order(newService("c4", "203.0.113.1", cln));
      await store.services.change({ serviceId: "c4", patch: { status: "terminated" } });
      await order(newService("m1", "203.0.113.1", { ...manage2, sku: "1" }));

      expect((await store.services.holdingLicence("cln", "203.0.113.1", "1", "a")).map((h) => h.service_id)).toEqual(["c2"]);
      expect(await store.services.holdingLicence("cln", "203.0.113.1", "1", "c2")).toEqual([]);
    });
  });

  describe("the licence listing by provider", () => {
    /** Three providers' licences, interleaved by service id, in several statuses. */
    const book = async () => {
      const rows: [string, Partial<NewService>][] = [
        ["a1", {}],
        ["a2", manage2],
        ["a3", cln],
        ["a4", manage2],
        ["a5", {}],
        ["a6", manage2],
        ["a7", manage2],
        ["a8", cln],
        ["a9", manage2],
      ];
      for (const [i, [id, over]] of rows.entries()) await order(newService(id, `203.0.113.${i + 1}`, over));
      for (const id of ["a4", "a7", "a8"]) await store.services.change({ serviceId: id, patch: { status: "active" } });
      await store.services.change({ serviceId: "a9", patch: { status: "terminated" } });
    };

    it("walks one provider's licences a page at a time, in service id order, each page with the provider's total", async () => {
      await book();
      expect(ids(await walk({ provider: "manage2" }, 2))).toEqual(["a2", "a4", "a6", "a7", "a9"]);
      const first = await store.services.page({ provider: "manage2", limit: 2 });
      expect(first).toMatchObject({ total: 5, nextCursor: expect.any(String) });
      expect(ids(first.items)).toEqual(["a2", "a4"]);
      expect(ids(await walk({ provider: "reseller" }, 1))).toEqual(["a1", "a5"]);
      expect((await store.services.page({ provider: "cln", limit: 10 })).total).toBe(2);
      expect((await store.services.page({ limit: 10 })).total).toBe(9);
    });

    it("filters by provider and status together, with their total", async () => {
      await book();
      const active = await store.services.page({ provider: "manage2", status: "active", limit: 1 });
      expect(active).toMatchObject({ total: 2, items: [{ service_id: "a4" }] });
      expect(ids(await walk({ provider: "manage2", status: "active" }, 1))).toEqual(["a4", "a7"]);
      expect(await store.services.page({ provider: "reseller", status: "active", limit: 10 })).toEqual({ items: [], nextCursor: null, total: 0 });
      expect((await store.services.page({ status: "active", limit: 10 })).total).toBe(3);
    });

    it("finds a licence by q within one provider only", async () => {
      await book();
      expect(await store.services.page({ q: "a2", provider: "manage2", limit: 10 })).toMatchObject({ total: 1, items: [{ service_id: "a2" }] });
      expect(await store.services.page({ q: "a2", provider: "cln", limit: 10 })).toEqual({ items: [], nextCursor: null, total: 0 });
      expect((await store.services.page({ q: "203.0.113.3", provider: "cln", status: "pending", limit: 10 })).total).toBe(1);
    });

    it("keeps each provider's total as licences change status and provider", async () => {
      await book();
      await store.services.change({ serviceId: "a1", patch: { provider: "manage2", sku: "12345" } });
      await store.services.change({ serviceId: "a2", patch: { status: "suspended" } });
      expect((await store.services.page({ provider: "manage2", limit: 1 })).total).toBe(6);
      expect((await store.services.page({ provider: "reseller", limit: 1 })).total).toBe(1);
      expect((await store.services.page({ provider: "manage2", status: "pending", limit: 1 })).total).toBe(2);
      expect((await store.services.page({ provider: "manage2", status: "suspended", limit: 1 })).total).toBe(1);
      expect((await store.services.page({ status: "pending", limit: 1 })).total).toBe(4);
      // The console's counts by status are the same counters.
      expect(await store.consoleReads.statusCounts()).toEqual({ pending: 4, active: 3, suspended: 1, terminated: 1 });
    });

    it("tells the total on an empty page past the provider's last licence", async () => {
      await book();
      const first = await store.services.page({ provider: "cln", limit: 1 });
      await store.services.change({ serviceId: "a8", patch: { provider: "reseller", sku: null } });
      expect(await store.services.page({ provider: "cln", limit: 1, cursor: first.nextCursor! })).toEqual({ items: [], nextCursor: null, total: 1 });
    });

    it("exports one provider's licences, each line showing its provider", async () => {
      await book();
      let text = "";
      for await (const chunk of store.services.exportChunks({ provider: "cln" })) text += chunk;
      const lines = text.trim().split("\n").map((l) => JSON.parse(l) as { service_id: string; provider: string });
      expect(lines.map((l) => [l.service_id, l.provider])).toEqual([
        ["a3", "cln"],
        ["a8", "cln"],
      ]);
    });
  });
});
