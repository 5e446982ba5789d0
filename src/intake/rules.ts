import type { Catalog, CatalogProduct } from "../catalog/catalog.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import type { Projection } from "./projection.js";
import { bundleComponents } from "../reseller/upstream.js";
import { unusableIpReason } from "../vocabulary/ip-address.js";
import type { ServiceRow } from "../store/store.js";
import type { BillingEvent, FieldErrors } from "./event-schema.js";
import { withArticle } from "../vocabulary/text.js";

/** The licence types a catalogue product (or a stored service) buys upstream. */
export function typesOf(p: Pick<CatalogProduct, "kind"> & { type?: string | null; bundle?: string | null }): string[] {
  return p.kind === "bundle" ? bundleComponents(p.bundle ?? "") : p.type ? [p.type] : [];
}

/**
 * What a catalogue product (or a stored service) holds at its IP, as "one licence, one service"
 * compares it: its provider and what it buys there. A reseller licence is its type (a bundle its
 * components'); a Manage2 or CLN licence is what that provider sells (package, CLN type), so the
 * reseller's cPanel and a Manage2 cPanel on one IP are two licences of two providers.
 */
export function licencesHeld(p: Pick<CatalogProduct, "kind"> & { type?: string | null; bundle?: string | null; provider?: string | null; sku?: string | null; purchase?: { sku: string } }): { key: string; label: string }[] {
  const provider = p.provider ?? "reseller";
  if (provider === "reseller") return typesOf(p).map((t) => ({ key: `reseller:${t}`, label: t }));
  const sku = p.sku ?? p.purchase?.sku ?? "";
  return [{ key: `${provider}:${sku}`, label: `${provider} ${p.type ?? sku}` }];
}

export interface RuleDeps {
  catalog: Catalog;
  allowPrivateIps: boolean;
  /** Services other than `except` that hold, or will hold, a licence at `ip`. */
  holdersOf(ip: string, except: string): ServiceRow[];
}

export interface Verdict {
  errors?: FieldErrors;
  /** The most specific code of the refusal: one rule's own, or `validation` when several fields are wrong. */
  code?: ErrorCode;
}

/** Rules that need the catalogue or the stored service; an empty verdict when the event passes. */
export function businessErrors(event: BillingEvent, existing: ServiceRow | undefined, projection: Projection | undefined, deps: RuleDeps): Verdict {
  const { catalog } = deps;
  const errors: FieldErrors = {};
  const codes = new Set<ErrorCode>();
  const add = (path: string, message: string, code: ErrorCode = "validation") => {
    (errors[path] ??= []).push(message);
    codes.add(code);
  };
  const verdict = (): Verdict => (Object.keys(errors).length ? { errors, code: codes.size === 1 ? [...codes][0]! : "validation" } : {});
  const serviceId = event.service.id;

  /** One licence, one service: no other service of ours may hold (provider, ip, any of `wanted`). */
  const checkFree = (path: string, ip: string, wanted: { key: string }[]) => {
    const keys = new Set(wanted.map((w) => w.key));
    for (const other of deps.holdersOf(ip, serviceId)) {
      const shared = licencesHeld(other).filter((l) => keys.has(l.key));
      if (shared.length) {
        add(path, `${ip} already has ${withArticle(shared.map((l) => l.label).join(" and "))} licence held by service ${other.service_id}; one licence belongs to one service`, "ip_in_use");
        return;
      }
    }
  };
  const checkUsable = (path: string, ip: string) => {
    const why = unusableIpReason(ip, deps.allowPrivateIps);
    if (why) add(path, why, "ip_unusable");
  };

  if (event.type === "service.created") {
    const product = catalog.product(event.service.product_id!);
    if (!product) add("service.product_id", `unknown product "${event.service.product_id}" (not in the product catalogue)`);
    checkUsable("service.ip", event.service.ip!);
    const orders = !existing || existing.status === "failed" || projection?.terminated === true;
    if (product && orders && !errors["service.ip"]) checkFree("service.ip", event.service.ip!, licencesHeld(product));
    return verdict();
  }

  // Every other event is about a service the bridge has (the intake answers 409 otherwise).
  const svc = existing!;
  const p = projection!;
  if (p.terminated) {
    // Terminating twice is harmless; the intake records it and does nothing.
    if (event.type === "service.terminated") return {};
    add("service.id", `service ${serviceId} is terminated; only service.created (ordering it again) applies to it`, "service_terminated");
    return verdict();
  }

  if (event.type === "service.ip_changed") {
    const to = event.changes!.ip!;
    const limit = catalog.product(svc.product_id)?.maxIpChanges ?? null;
    if (limit !== null && svc.ip_changes >= limit) {
      add("changes.ip", `IP change limit reached: product ${svc.product_id} allows ${limit} IP changes (max_ip_changes)`, "ip_change_limit");
    }
    // To the IP it has (or will have) already: nothing to change (decide.ts), not a refusal.
    if (to !== p.ip) {
      checkUsable("changes.ip", to);
      if (!errors["changes.ip"]) checkFree("changes.ip", to, licencesHeld(svc));
    }
  }
  // To the product it has already: nothing to change (decide.ts), whatever the product is.
  if (event.type === "service.product_changed" && event.changes!.product_id !== svc.product_id) {
    const to = catalog.product(event.changes!.product_id!);
    const from = catalog.product(svc.product_id);
    const provider = svc.provider ?? "reseller";
    if (!to) {
      add("changes.product_id", `unknown product "${event.changes!.product_id}" (not in the product catalogue)`);
    } else if (provider !== "reseller" || to.provider !== "reseller") {
      // Manage2 changes a licence's package, CLN its type: within the provider the licence is held at.
      if (to.provider !== provider) {
        add("changes.product_id", `product "${to.productId}" is bought from ${to.provider}, but the service's licence is held at ${provider}; a product change stays with one provider`);
      } else if (to.kind !== "licence") {
        add("changes.product_id", `product "${to.productId}" is not one licence`);
      } else {
        checkFree("changes.product_id", p.ip, licencesHeld(to));
      }
    } else if (to.kind !== "licence" || to.type !== "litespeed") {
      add("changes.product_id", `only a LiteSpeed core change can be applied; product "${to.productId}" is not a LiteSpeed licence`);
    } else if (!from || from.kind !== "licence" || from.type !== "litespeed") {
      add("changes.product_id", `only a LiteSpeed core change can be applied; the service's product "${svc.product_id}" is not a LiteSpeed licence`);
    }
  }
  return verdict();
}
