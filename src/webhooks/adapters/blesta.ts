import { BlockList, isIPv4, isIPv6 } from "node:net";
import type { Router } from "express";
import type { BillingCycle } from "../../catalog/catalog.js";
import type { EventType, FieldErrors } from "../event-schema.js";
import {
  adapterRouter,
  catalogueVerdict,
  changeEvents,
  compact,
  cycleFromMonths,
  dateMs,
  deliveryId,
  fullName,
  normalizeDate,
  notInCatalogue,
  numberOrDigits,
  secretEquals,
  sha256Hex,
  type AdapterDeps,
  type AdapterSpec,
  type TranslatedEvent,
} from "./common.js";
import { pick, str, type FieldMap } from "./field-maps.js";

/**
 * Where Blesta's Webhooks plugin puts each field. The plugin posts the event's parameters
 * (`service_id`, `vars`, `old_service`, per Blesta's event reference) as JSON and names the event
 * in the `X-Blesta-Event` header. The current service under `service` (with `package`,
 * `package_pricing`, `fields` and `client`) is assumed, as is an IP in a service field named
 * `ip`. Override any entry with ADAPTER_FIELD_MAPS_FILE `{"blesta": {...}}`.
 */
export const BLESTA_FIELDS = {
  event: ["event"],
  delivery_id: [],
  "service.id": ["service_id", "service.id", "old_service.id"],
  "service.status": ["service.status", "vars.status"],
  "service.product_id": ["service.package.id", "service.package_pricing.package_id", "vars.package_id"],
  "service.term": ["service.package_pricing.term", "vars.term"],
  "service.period": ["service.package_pricing.period", "vars.period"],
  "service.ip": ["service.fields[key=ip].value", "service.fields[key=ip_address].value", "service.fields[key=ipaddress].value", "vars.ip"],
  "service.date_renews": ["service.date_renews", "vars.date_renews"],
  "customer.email": ["service.client.email", "client.email", "vars.client.email"],
  "customer.first_name": ["service.client.first_name", "client.first_name"],
  "customer.last_name": ["service.client.last_name", "client.last_name"],
  "old.status": ["old_service.status"],
  "old.product_id": ["old_service.package.id", "old_service.package_pricing.package_id"],
  "old.ip": ["old_service.fields[key=ip].value", "old_service.fields[key=ip_address].value", "old_service.fields[key=ipaddress].value"],
  "old.date_renews": ["old_service.date_renews"],
} as const satisfies FieldMap;

export type BlestaField = keyof typeof BLESTA_FIELDS;

const EVENTS: Readonly<Record<string, EventType | "edit">> = {
  "services.addafter": "service.created",
  "services.suspendafter": "service.suspended",
  "services.unsuspendafter": "service.unsuspended",
  "services.cancelafter": "service.terminated",
  "services.editafter": "edit",
};

/** Statuses of a service that is ordered but not yet paid or approved. */
const NOT_YET_ACTIVE = new Set(["pending", "in_review"]);

/** Blesta's `term` + `period` (1 month, 3 month, 1 year, ...) as our cycle. */
export function blestaCycle(term: unknown, period: unknown): BillingCycle | undefined {
  const n = numberOrDigits(typeof term === "string" ? term.trim() : term);
  const p = str(period)?.toLowerCase().replace(/s$/, "");
  if (p === "month") return cycleFromMonths(n);
  if (p === "year") return cycleFromMonths(n * 12);
  return undefined;
}

/** An allow-list from IPs and CIDR ranges; IPv4-mapped IPv6 peers are checked as IPv4. */
export function ipAllowList(entries: readonly string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const [addr, prefix] = entry.split("/");
    const type = isIPv6(addr!) ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(addr!, type);
    else list.addSubnet(addr!, Number(prefix), type);
  }
  return (address) => {
    if (!address) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const a = mapped ? mapped[1]! : address;
    if (isIPv4(a)) return list.check(a, "ipv4");
    if (isIPv6(a)) return list.check(a, "ipv6");
    return false;
  };
}

export interface BlestaOptions {
  token: string;
  /** BLESTA_ALLOWED_IPS; unset allows any source. */
  allowedIps?: readonly string[];
  fields?: FieldMap<BlestaField>;
}

/**
 * `POST /webhooks/blesta/:token`: Blesta signs nothing, so the URL carries the credential
 * (BLESTA_WEBHOOK_TOKEN, compared in constant time), optionally with a source allow-list
 * (BLESTA_ALLOWED_IPS). A disallowed source gets 403 before its token is even looked at.
 */
export function blestaSpec(options: BlestaOptions): AdapterSpec {
  const fields = options.fields ?? BLESTA_FIELDS;
  const allowed = options.allowedIps?.length ? ipAllowList(options.allowedIps) : undefined;
  return {
    source: "blesta",
    path: "/webhooks/blesta/:token",
    contentTypeHint: "Content-Type must be application/json: set the Blesta webhook's method to JSON (POST JSON)",
    authenticate(req) {
      if (allowed && !allowed(req.ip ?? req.socket.remoteAddress)) return { status: 403, error: "Forbidden: source address not allowed" };
      const token = typeof req.params.token === "string" ? req.params.token : "";
      if (!secretEquals(token, options.token)) return { status: 401, error: "Invalid token" };
      return undefined;
    },
    translate(body, ctx) {
      const f = (k: BlestaField) => pick(body, fields[k]);
      const eventName = str(ctx.req.header("x-blesta-event")) ?? str(f("event"));
      if (!eventName) return { kind: "invalid", errors: { event: ["is required: the X-Blesta-Event header, e.g. Services.addAfter"] } };
      const kind = EVENTS[eventName.toLowerCase()];
      if (!kind) return { kind: "ignored", reason: `Blesta event "${eventName.slice(0, 60)}" is not one the bridge acts on` };

      const idRaw = f("service.id");
      const serviceId = str(idRaw);
      const productRaw = f("service.product_id");
      const productId = str(productRaw);
      // Blesta sends no delivery id (X-Webhook-Id names the webhook, not the delivery); a resend carries the same body.
      const delivery = deliveryId(f("delivery_id")) ?? `${eventName}:${serviceId ?? ""}:${sha256Hex(ctx.raw).slice(0, 32)}`;

      const created = (webhookId: string): TranslatedEvent | { ignored: string } => {
        const notLicence = notInCatalogue(ctx.catalog, productId, "package");
        if (notLicence) return { ignored: notLicence };
        const errors: FieldErrors = {};
        const term = f("service.term");
        const period = f("service.period");
        const cycle = blestaCycle(term, period);
        if ((term !== undefined || period !== undefined) && cycle === undefined) {
          errors["service.billing_cycle"] = [
            `Blesta term "${String(term ?? "").slice(0, 10)} ${String(period ?? "").slice(0, 10)}" has no licence equivalent (expected 1, 3 or 6 month, or 1, 2 or 3 year)`,
          ];
        }
        const event = {
          type: "service.created" as const,
          service: compact({
            id: idRaw,
            product_id: productRaw,
            billing_cycle: cycle,
            ip: f("service.ip"),
            customer: { email: f("customer.email"), name: fullName(f("customer.first_name"), f("customer.last_name")) },
            next_due_date: normalizeDate(f("service.date_renews")),
          }),
        };
        return { webhookId, event, errors };
      };

      if (kind === "service.created") {
        const status = str(f("service.status"))?.toLowerCase();
        if (status !== undefined && NOT_YET_ACTIVE.has(status)) {
          return { kind: "ignored", reason: `service is ${status}; the licence is bought when Blesta activates it (Services.editAfter)` };
        }
        const c = created(delivery);
        return "ignored" in c ? { kind: "ignored", reason: c.ignored } : { kind: "events", events: [c] };
      }

      const ifUnknownService = catalogueVerdict(ctx.catalog, [productId]) === "not_licence" ? "ignore" : "conflict";
      if (kind !== "edit") {
        return { kind: "events", events: [{ webhookId: delivery, event: { type: kind, service: compact({ id: idRaw }) }, ifUnknownService }] };
      }

      // Services.editAfter: old vs new service, each difference its own event with its own id, in this order.
      const oldStatus = str(f("old.status"))?.toLowerCase();
      const newStatus = str(f("service.status"))?.toLowerCase();
      if (oldStatus !== undefined && NOT_YET_ACTIVE.has(oldStatus) && newStatus === "active") {
        const c = created(`${delivery}:created`);
        return "ignored" in c ? { kind: "ignored", reason: c.ignored } : { kind: "events", events: [c] };
      }

      const events: TranslatedEvent[] = [];
      const newRenews = f("service.date_renews");
      const oldMs = dateMs(f("old.date_renews"));
      const newMs = dateMs(newRenews);
      if (oldMs !== undefined && newMs !== undefined && newMs > oldMs) {
        events.push({
          webhookId: `${delivery}:renewed`,
          event: { type: "service.renewed", service: compact({ id: idRaw, next_due_date: normalizeDate(newRenews) }) },
          ifUnknownService,
        });
      }
      events.push(
        ...changeEvents(ctx.catalog, {
          delivery,
          serviceId: idRaw,
          oldIp: str(f("old.ip")),
          newIp: f("service.ip"),
          oldProduct: str(f("old.product_id")),
          newProduct: productRaw,
          ifUnknownService,
        }),
      );
      if (events.length === 0) return { kind: "ignored", reason: "no change the bridge acts on (renewal date, IP and package unchanged)" };
      return { kind: "events", events };
    },
  };
}

export function blestaRouter(options: BlestaOptions, deps: AdapterDeps): Router {
  return adapterRouter(blestaSpec(options), deps);
}
