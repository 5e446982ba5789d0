import { createHmac } from "node:crypto";
import type { Router } from "express";
import type { BillingCycle } from "../../catalog/catalog.js";
import { checkTimestamp } from "../signature.js";
import type { EventType, FieldErrors } from "../event-schema.js";
import {
  adapterRouter,
  anyDigestMatches,
  catalogueVerdict,
  compact,
  deliveryId,
  fullName,
  normalizeDate,
  notInCatalogue,
  sha256Hex,
  signatureCandidates,
  type AdapterDeps,
  type AdapterSpec,
  type TranslatedEvent,
  type Translation,
} from "./common.js";
import { pick, str, type FieldMap } from "./field-maps.js";

/**
 * Where the HostBill WebHooks plugin puts each field. HostBill does not document the JSON its
 * plugin posts, so these are assumptions: the hook name under `event`, the account (the hook's
 * `$details`) under `account` (or `details` / `data`), the client under `client`, the invoice
 * under `invoice`. Override any entry with ADAPTER_FIELD_MAPS_FILE `{"hostbill": {...}}`.
 * `invoice.item.*` paths are relative to one invoice item.
 */
export const HOSTBILL_FIELDS = {
  event: ["event", "hook", "action"],
  delivery_id: ["delivery_id", "webhook_event_id", "event_id"],
  "service.id": ["account.id", "details.id", "data.id", "account_id"],
  "service.product_id": ["account.product_id", "details.product_id", "data.product_id", "product_id"],
  "service.billing_cycle": ["account.billingcycle", "details.billingcycle", "data.billingcycle", "account.cycle", "details.cycle", "billingcycle"],
  "service.ip": ["account.ip", "details.ip", "data.ip", "account.dedicated_ip", "details.dedicated_ip", "ip"],
  "service.next_due_date": ["account.next_due", "details.next_due", "data.next_due", "next_due"],
  "customer.email": ["client.email", "account.client.email", "details.client.email", "data.client.email", "email"],
  "customer.name": ["client.name", "client.fullname", "account.client.name"],
  "customer.firstname": ["client.firstname", "account.client.firstname", "details.client.firstname"],
  "customer.lastname": ["client.lastname", "account.client.lastname", "details.client.lastname"],
  "old.product_id": ["old_product_id", "account.old_product_id", "details.old_product_id", "data.old_product_id", "upgrade.old_product_id"],
  "changes.product_id": ["new_product_id", "account.new_product_id", "details.new_product_id", "data.new_product_id", "upgrade.new_product_id"],
  "invoice.id": ["invoice.id", "details.id", "data.id", "invoice_id"],
  "invoice.items": ["invoice.items", "details.items", "data.items", "items"],
  "invoice.item.type": ["type"],
  "invoice.item.account_id": ["item_id", "rel_id", "account_id"],
  "invoice.item.next_due_date": ["next_due", "account.next_due"],
} as const satisfies FieldMap;

export type HostbillField = keyof typeof HOSTBILL_FIELDS;

/** Headers a HostBill delivery id might come in (none is documented; the id is derived otherwise). */
export const HOSTBILL_DELIVERY_HEADERS = ["hb-delivery-id", "hb-delivery", "hb-event-id"] as const;

const ACCOUNT_EVENTS: Readonly<Record<string, EventType>> = {
  afteraccountcreate: "service.created",
  afteraccountsuspend: "service.suspended",
  afteraccountunsuspend: "service.unsuspended",
  afteraccountterminate: "service.terminated",
  afteraccountchangepackage: "service.product_changed",
};
const INVOICE_PAID = "afterinvoicefullpaid";

/** HostBill's cycle spellings: the price codes (m, q, s, a, b, t) and the account's words. */
const HOSTBILL_CYCLES: Readonly<Record<string, BillingCycle>> = {
  m: "monthly",
  monthly: "monthly",
  q: "quarterly",
  quarterly: "quarterly",
  s: "semiannually",
  semiannually: "semiannually",
  a: "annually",
  annually: "annually",
  yearly: "annually",
  b: "biennially",
  biennially: "biennially",
  t: "triennially",
  triennially: "triennially",
};

export function hostbillCycle(raw: unknown): BillingCycle | undefined {
  const s = str(raw);
  return s === undefined ? undefined : HOSTBILL_CYCLES[s.toLowerCase().replace(/[^a-z]/g, "")];
}

const norm = (event: string) => event.toLowerCase().replace(/[^a-z0-9]/g, "");

/**
 * `POST /webhooks/hostbill`: `HB-Signature` is the hex HMAC-SHA256 of `HB-Timestamp` + raw body
 * with HOSTBILL_WEBHOOK_SECRET; timestamps more than 5 minutes off are refused.
 */
export function hostbillSpec(secret: string, fields: FieldMap<HostbillField> = HOSTBILL_FIELDS): AdapterSpec {
  const key = Buffer.from(secret, "utf8");
  return {
    source: "hostbill",
    path: "/webhooks/hostbill",
    authenticate(req, raw, nowMs) {
      const signature = req.header("hb-signature");
      const timestamp = req.header("hb-timestamp");
      if (!signature || !timestamp) return { status: 401, error: "Invalid signature: missing HB-Signature or HB-Timestamp header" };
      const problem = checkTimestamp(timestamp.trim(), nowMs);
      if (problem === "Invalid timestamp") return { status: 401, error: "Invalid signature: HB-Timestamp is not Unix seconds" };
      if (problem) return { status: 401, error: `Invalid signature: ${problem.toLowerCase()}` };
      const expected = createHmac("sha256", key).update(timestamp.trim()).update(raw).digest();
      if (!anyDigestMatches([expected], signatureCandidates(signature))) return { status: 401, error: "Invalid signature: no matching signature" };
      return undefined;
    },
    translate(body, ctx) {
      const f = (k: HostbillField) => pick(body, fields[k]);
      const eventName = str(f("event")) ?? str(ctx.req.header("hb-event"));
      if (!eventName) return { kind: "invalid", errors: { event: ["is required: the HostBill hook name, e.g. after_accountcreate"] } };
      const delivery = HOSTBILL_DELIVERY_HEADERS.map((h) => deliveryId(ctx.req.header(h))).find(Boolean) ?? deliveryId(f("delivery_id"));
      const timestamp = ctx.req.header("hb-timestamp")?.trim() ?? "";
      const name = norm(eventName);

      if (name === INVOICE_PAID) return invoicePaid(body, fields, delivery, timestamp);
      const type = ACCOUNT_EVENTS[name];
      if (!type) return { kind: "ignored", reason: `HostBill event "${eventName.slice(0, 60)}" is not one the bridge acts on` };

      const idRaw = f("service.id");
      const serviceId = str(idRaw);
      const productId = str(f("service.product_id"));
      const webhookId = delivery ?? `h:${sha256Hex(name, serviceId ?? "", timestamp).slice(0, 40)}`;
      const errors: FieldErrors = {};

      if (type === "service.created") {
        const notLicence = notInCatalogue(ctx.catalog, productId);
        if (notLicence) return { kind: "ignored", reason: notLicence };
        const cycleRaw = f("service.billing_cycle");
        const cycle = hostbillCycle(cycleRaw);
        if (cycleRaw !== undefined && cycle === undefined) {
          errors["service.billing_cycle"] = [
            `HostBill billing cycle "${String(cycleRaw).slice(0, 40)}" has no licence equivalent (expected m, q, s, a, b, t or Monthly, Quarterly, Semi-Annually, Annually, Biennially, Triennially)`,
          ];
        }
        const event = {
          type,
          service: compact({
            id: idRaw,
            product_id: f("service.product_id"),
            billing_cycle: cycle,
            ip: f("service.ip"),
            customer: {
              email: f("customer.email"),
              name: str(f("customer.name")) ?? fullName(f("customer.firstname"), f("customer.lastname")),
            },
            next_due_date: normalizeDate(f("service.next_due_date")),
          }),
        };
        return { kind: "events", events: [{ webhookId, event, errors }] };
      }

      if (type === "service.product_changed") {
        const oldProduct = str(f("old.product_id"));
        // After the change, the account's own product_id is the new one.
        const newRaw = f("changes.product_id") ?? f("service.product_id");
        const newProduct = str(newRaw);
        if (newProduct !== undefined && oldProduct === newProduct) return { kind: "ignored", reason: "the package did not change" };
        // Neither product is a licence: ignored unless the bridge knows the service (then the intake names the problem).
        const verdict = catalogueVerdict(ctx.catalog, [oldProduct, newProduct]);
        const event = {
          type,
          service: compact({ id: idRaw, product_id: oldProduct }),
          changes: compact({ product_id: newRaw }),
        };
        return { kind: "events", events: [{ webhookId, event, ifUnknownService: verdict === "not_licence" ? "ignore" : "conflict" }] };
      }

      const verdict = catalogueVerdict(ctx.catalog, [productId]);
      const event = { type, service: compact({ id: idRaw }) };
      return { kind: "events", events: [{ webhookId, event, ifUnknownService: verdict === "not_licence" ? "ignore" : "conflict" }] };
    },
  };
}

/**
 * `after_invoicefullpaid`: one `service.renewed` per account the invoice pays. Keyed by invoice
 * and account (an invoice is paid in full once), so a re-signed retry is still a duplicate. An
 * account the bridge does not know (hosting on the same invoice, or the first invoice of an order
 * whose licence is created after payment) is ignored, not 409: a retry must not add a cycle.
 */
function invoicePaid(body: Record<string, unknown>, fields: FieldMap<HostbillField>, delivery: string | undefined, timestamp: string): Translation {
  const invoiceId = str(pick(body, fields["invoice.id"]));
  let items = pick(body, fields["invoice.items"]);
  // PHP arrays keyed by id arrive as JSON objects.
  if (items !== null && typeof items === "object" && !Array.isArray(items)) items = Object.values(items);
  if (!Array.isArray(items)) return { kind: "ignored", reason: "the invoice lists no items" };

  const accounts = new Map<string, unknown>();
  for (const item of items) {
    const type = str(pick(item, fields["invoice.item.type"]));
    if (type !== undefined && !/hosting|account|service|licen[cs]e/i.test(type)) continue;
    const accountId = str(pick(item, fields["invoice.item.account_id"]));
    if (accountId === undefined || accountId === "0" || accounts.has(accountId)) continue;
    accounts.set(accountId, normalizeDate(pick(item, fields["invoice.item.next_due_date"])));
  }
  if (accounts.size === 0) return { kind: "ignored", reason: "the invoice pays no account" };

  const base = delivery ?? (invoiceId ? `invoice:${invoiceId}` : `h:${sha256Hex(INVOICE_PAID, [...accounts.keys()].join(","), timestamp).slice(0, 40)}`);
  const events: TranslatedEvent[] = [...accounts].map(([accountId, nextDue]) => ({
    webhookId: `${base}:${accountId}`,
    event: { type: "service.renewed", service: compact({ id: accountId, next_due_date: nextDue }) },
    ifUnknownService: "ignore",
  }));
  return { kind: "events", events };
}

export function hostbillRouter(secret: string, deps: AdapterDeps, fields?: FieldMap<HostbillField>): Router {
  return adapterRouter(hostbillSpec(secret, fields), deps);
}
