import { createHmac } from "node:crypto";
import { NOT_AN_OBJECT } from "../../validation/field-errors.js";
import { panelEventSchema, type EventType, type FieldErrors } from "../../intake/event-schema.js";
import type { WebhookSource } from "../route.js";
import { pick, str, type FieldMap } from "./field-maps.js";
import { compact, cycleFromMonths, deliveryId, normalizeDate, numberOrDigits } from "./panel-values.js";
import { catalogueVerdict, notInCatalogue } from "./catalogue-checks.js";
import { changeEvents } from "./change-events.js";
import { anyDigestMatches, sha256Hex, signatureCandidates } from "./signatures.js";

/**
 * Where Upmind's V1 webhook payload keeps each field. The envelope (`webhook_event_id`,
 * `hook_code`, `object`) is Upmind's documented V1 format; the contract-product object's field
 * names are not documented publicly, so those entries are assumptions. Override any of them with
 * ADAPTER_FIELD_MAPS_FILE `{"upmind": {...}}`. `old.*` are the values before a
 * `contract_product_updated`; without them the bridge compares with what it has stored.
 */
export const UPMIND_FIELDS = {
  event: ["hook_code", "hook", "event"],
  delivery_id: ["webhook_event_id", "hook_log_id"],
  event_time: ["event_datetime"],
  "service.id": ["object.id", "object_id"],
  "service.product_id": ["object.product_id", "object.product.id"],
  "service.billing_months": ["object.billing_cycle_months", "object.billing_period_months", "object.billing_cycle.months", "object.term_months"],
  "service.ip": ["object.ip", "object.ip_address", "object.provision_field_values.ip", "object.provision_fields.ip"],
  "service.next_due_date": ["object.next_due_date", "object.next_billing_date", "object.renewal_date"],
  "customer.email": ["object.client.email", "object.client.notification_email", "object.client.login_email", "object.contract.client.email", "object.client_email"],
  "customer.name": ["object.client.full_name", "object.client.fullname", "object.client.public_name", "object.contract.client.full_name"],
  "old.product_id": ["previous.product_id", "object_previous.product_id", "object.previous_product_id", "object.original.product_id"],
  "old.ip": ["previous.ip", "object_previous.ip", "object.previous_ip", "object.original.ip"],
} as const satisfies FieldMap;

export type UpmindField = keyof typeof UPMIND_FIELDS;

/** Contract-product hooks, without Upmind's `_hook` suffix. */
const HOOKS: Readonly<Record<string, EventType | "updated">> = {
  contract_product_created: "service.created",
  contract_product_activated: "service.created",
  contract_product_suspended: "service.suspended",
  contract_product_unsuspended: "service.unsuspended",
  contract_product_cancelled: "service.terminated",
  contract_product_canceled: "service.terminated",
  contract_product_terminated: "service.terminated",
  contract_product_renewed: "service.renewed",
  contract_product_updated: "updated",
};

export function upmindHook(code: string): string {
  return code
    .trim()
    .toLowerCase()
    .replace(/[\s.-]+/g, "_")
    .replace(/_hook$/, "");
}

/**
 * The dedupe key of an Upmind delivery, from the body alone (the signature covers nothing else):
 * its `webhook_event_id` (or `hook_log_id`), for ever. Without one, the trimmed body's hash: for
 * ever too when the body carries its own `event_datetime` (the same bytes are the same event),
 * else only for the UTC day it is received on (the bridge's clock: Upmind signs no time), so the
 * same renewal a month later is a new one (and so is a copy received after midnight UTC). The
 * signature covers the trimmed body, so the key does: whitespace added around a replayed body
 * must not make it a new delivery.
 */
export function upmindDeliveryKey(id: unknown, eventTime: unknown, raw: Buffer, nowMs: number): string {
  const signedId = deliveryId(id);
  if (signedId) return signedId;
  const key = `body:${sha256Hex(raw.toString("utf8").trim()).slice(0, 40)}`;
  return str(eventTime) ? key : `${key}:${new Date(nowMs).toISOString().slice(0, 10)}`;
}

/**
 * `POST /webhooks/upmind`: `X-Webhook-Signature` is the HMAC-SHA256 of the body with
 * UPMIND_WEBHOOK_SECRET, hex (what Upmind's own endpoint library checks) or base64. Upmind's
 * library trims the body before hashing, so the trimmed body is accepted too. Upmind sends no
 * timestamp header: a replayed delivery is stopped by the dedupe on `webhook_event_id`
 * (upmindDeliveryKey), and a changed one by the signature; old deliveries are not refused, since
 * Upmind retries for a while. The hook, the id and the service all come from the signed body.
 */
export function upmindSource(secret: string, fields: FieldMap<UpmindField> = UPMIND_FIELDS): WebhookSource {
  const key = Buffer.from(secret, "utf8");
  return {
    source: "upmind",
    path: "/webhooks/upmind",
    // Upmind's contract-product hooks carry the client's e-mail; a hook without one still buys the licence.
    schema: panelEventSchema,
    authenticate(req, raw) {
      const signature = req.header("x-webhook-signature");
      if (!signature) return { status: 401, error: "Invalid signature: missing X-Webhook-Signature header" };
      const expected = [createHmac("sha256", key).update(raw).digest()];
      const trimmed = raw.toString("utf8").trim();
      if (Buffer.byteLength(trimmed) !== raw.length) expected.push(createHmac("sha256", key).update(trimmed).digest());
      if (!anyDigestMatches(expected, signatureCandidates(signature))) return { status: 401, error: "Invalid signature: no matching signature" };
      return undefined;
    },
    async translate(raw, ctx) {
      if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { kind: "invalid", errors: { "(body)": [NOT_AN_OBJECT] } as Record<string, string[]> };
      const body = raw as Record<string, unknown>;
      const f = (k: UpmindField) => pick(body, fields[k]);
      const code = str(f("event"));
      if (!code) return { kind: "invalid", errors: { hook_code: ["is required: the Upmind hook code, e.g. contract_product_activated_hook"] } };
      const hook = upmindHook(code);
      const kind = HOOKS[hook];
      if (!kind) return { kind: "ignored", reason: `Upmind hook "${code.slice(0, 60)}" is not one the bridge acts on` };

      const delivery = upmindDeliveryKey(f("delivery_id"), f("event_time"), ctx.raw, ctx.nowMs);
      const idRaw = f("service.id");
      const serviceId = str(idRaw);
      const productRaw = f("service.product_id");
      const productId = str(productRaw);

      if (kind === "service.created") {
        const notLicense = notInCatalogue(ctx.catalog, productId);
        if (notLicense) return { kind: "ignored", reason: notLicense };
        const errors: FieldErrors = {};
        const monthsRaw = f("service.billing_months");
        const cycle = cycleFromMonths(numberOrDigits(monthsRaw));
        if (monthsRaw !== undefined && cycle === undefined) {
          errors["service.billing_cycle"] = [`Upmind billing period of ${String(monthsRaw).slice(0, 20)} months has no licence equivalent (expected 1, 3, 6, 12, 24 or 36)`];
        }
        const event = {
          type: kind,
          service: compact({
            id: idRaw,
            product_id: productRaw,
            billing_cycle: cycle,
            ip: f("service.ip"),
            customer: { email: f("customer.email"), name: str(f("customer.name")) },
            next_due_date: normalizeDate(f("service.next_due_date")),
          }),
        };
        return { kind: "events", events: [{ webhookId: delivery, event, errors }] };
      }

      const ifUnknownService = catalogueVerdict(ctx.catalog, [productId]) === "not_licence" ? "ignore" : "conflict";
      if (kind === "service.renewed") {
        const event = { type: kind, service: compact({ id: idRaw, next_due_date: normalizeDate(f("service.next_due_date")) }) };
        return { kind: "events", events: [{ webhookId: delivery, event, ifUnknownService }] };
      }
      if (kind !== "updated") {
        return { kind: "events", events: [{ webhookId: delivery, event: { type: kind, service: compact({ id: idRaw }) }, ifUnknownService }] };
      }

      // contract_product_updated: what changed, from the payload's old values or, failing those, the stored licence.
      const stored = serviceId !== undefined ? await ctx.services?.get(serviceId) : undefined;
      const oldProduct = str(f("old.product_id")) ?? stored?.product_id;
      const oldIp = str(f("old.ip")) ?? stored?.ip;
      if (!stored && oldProduct === undefined && oldIp === undefined) {
        return { kind: "ignored", reason: `service ${serviceId ?? "(no id)"} is not a licence the bridge manages; nothing to compare the update with` };
      }
      const events = changeEvents(ctx.catalog, {
        delivery,
        serviceId: idRaw,
        oldIp,
        newIp: f("service.ip"),
        oldProduct,
        newProduct: productRaw,
        ifUnknownService,
      });
      if (events.length === 0) return { kind: "ignored", reason: "no change the bridge acts on (product and IP unchanged)" };
      return { kind: "events", events };
    },
  };
}
