import { createHmac } from "node:crypto";
import type { BillingCycle } from "../../catalog/catalog.js";
import { checkTimestamp } from "../signature.js";
import { panelEventSchema, type EventType, type FieldErrors } from "../../intake/event-schema.js";
import type { TranslatedEvent, Translation, WebhookSource } from "../route.js";
import { panelGet } from "./panel-api.js";
import { pick, str, type FieldMap } from "./field-maps.js";
import { compact, deliveryId, fullName, normalizeDate } from "./panel-values.js";
import { catalogueVerdict, notInCatalogue } from "./catalogue-checks.js";
import { anyDigestMatches, sha256Hex, signatureCandidates } from "./signatures.js";

/**
 * Where HostBill's hooks keep each field. The WebHooks plugin (HostBill docs, "WebHooks") posts
 * the hook's own `$details` with no envelope, as JSON or a form, and names the hook in the
 * `HB-Event` header. Account hooks carry the account as `service` (after_accountcreate,
 * after_accountterminate: {service, account_id, server}), `account` (after_accountchangepackage,
 * newer after_accountunsuspend: {account, product}) or just its id (after_accountsuspend);
 * after_invoicefullpaid is the invoice with its `items` at the top level. No hook carries the
 * client's e-mail: with HOSTBILL_API_URL/ID/KEY the bridge reads it (getClientDetails), and the
 * account's missing fields (getAccountDetails); without, the licence is bought and not mailed.
 * Override any entry with ADAPTER_FIELD_MAPS_FILE {"hostbill": {...}}.
 */
export const HOSTBILL_FIELDS = {
  event: ["event", "hook"],
  delivery_id: ["delivery_id"],
  "service.id": ["account_id", "service.id", "account.id", "acc_id", "details.id", "id"],
  "service.product_id": ["service.product_id", "account.product_id", "details.product_id", "product_id"],
  "service.billing_cycle": ["service.billingcycle", "account.billingcycle", "details.billingcycle", "service.cycle", "billingcycle"],
  "service.ip": ["service.ip", "account.ip", "details.ip", "service.dedicated_ip", "service.domain", "account.domain", "ip"],
  "service.next_due_date": ["service.next_due", "account.next_due", "details.next_due", "next_due"],
  "service.client_id": ["service.client_id", "account.client_id", "details.client_id", "client_id"],
  "customer.email": ["client.email", "service.client.email", "account.client.email", "email"],
  "customer.firstname": ["client.firstname", "service.client.firstname", "account.client.firstname"],
  "customer.lastname": ["client.lastname", "service.client.lastname", "account.client.lastname"],
  "old.product_id": ["old_product_id", "account.product_id", "service.product_id"],
  "changes.product_id": ["product.id", "new_product_id", "product_id"],
  "invoice.id": ["id", "invoice.id", "invoice_id"],
  "invoice.items": ["items", "invoice.items"],
  "invoice.item.type": ["type"],
  "invoice.item.account_id": ["item_id", "rel_id", "account_id"],
  "invoice.item.next_due_date": ["next_due", "account.next_due"],
  // In the answers of HostBill's admin API (getAccountDetails → details, getClientDetails → client).
  "api.account.product_id": ["details.product_id"],
  "api.account.billing_cycle": ["details.billingcycle"],
  "api.account.ip": ["details.custom[variable=ip].data.0", "details.ip", "details.domain"],
  "api.account.next_due_date": ["details.next_due"],
  "api.account.client_id": ["details.client_id"],
  "api.client.email": ["client.email"],
  "api.client.firstname": ["client.firstname"],
  "api.client.lastname": ["client.lastname"],
} as const satisfies FieldMap;

export type HostbillField = keyof typeof HOSTBILL_FIELDS;

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

export interface HostbillApiConfig {
  /** HostBill's admin API endpoint, e.g. https://billing.example.com/admin/api.php */
  url: string;
  id: string;
  key: string;
}

export interface HostbillOptions {
  secret: string;
  fields?: FieldMap<HostbillField>;
  /** HOSTBILL_API_URL/ID/KEY: where to read what a hook lacks. */
  api?: HostbillApiConfig;
}

/** HostBill's admin API (api.hostbillapp.com): api_id, api_key and call=<method> in a form POST. */
function hostbillApi(config: HostbillApiConfig) {
  const call = async (method: string, params: Record<string, string>) => {
    const answer = await panelGet("HostBill", new URL(config.url), {
      method: "POST",
      form: { api_id: config.id, api_key: config.key, call: method, ...params },
    });
    return answer !== null && typeof answer === "object" && (answer as { success?: unknown }).success !== false ? (answer as Record<string, unknown>) : undefined;
  };
  return {
    account: (id: string) => call("getAccountDetails", { id }),
    client: (id: string) => call("getClientDetails", { id }),
  };
}

/** A form field's value: HostBill keeps custom data keyed by item id (`data[<item_id>]`). */
function firstScalar(v: unknown): unknown {
  if (v !== null && typeof v === "object") return Object.values(v as Record<string, unknown>).find((x) => typeof x === "string" || typeof x === "number");
  return v;
}

/**
 * Which hook a delivery is. The plugin names it in `HB-Event` only, a header HB-Signature does not
 * cover; a body that names it (`event`, as custom senders post) is signed and decides, and an
 * HB-Event that says otherwise is refused. `typeFrom` says the name rests on the header.
 */
function hookOf(header: string | undefined, inBody: string | undefined): { eventName: string; typeFrom?: "HB-Event" } | { errors: FieldErrors } {
  if (inBody !== undefined) {
    if (header !== undefined && norm(header) !== norm(inBody)) {
      return { errors: { "HB-Event": [`"${header.slice(0, 60)}" contradicts the signed body, which names "${inBody.slice(0, 60)}"`] } };
    }
    return { eventName: inBody };
  }
  if (header !== undefined) return { eventName: header, typeFrom: "HB-Event" };
  return { errors: { event: ["is required: the HB-Event header, e.g. after_accountcreate"] } };
}

/**
 * `POST /webhooks/hostbill`: `HB-Signature` is the hex HMAC-SHA256 of `HB-Timestamp` + raw body
 * with HOSTBILL_WEBHOOK_SECRET; timestamps more than 5 minutes off are refused. The plugin posts
 * a form by default, or JSON: both are read. Whatever the signature leaves out (HB-Event,
 * HB-Hook, Content-Type, any delivery-id header) can be changed on a copy within those 5 minutes,
 * so none of it makes a delivery new: the key is the body's delivery_id or invoice, else the
 * signed bytes, and a copy whose HB-Event names another event than the first is refused (409).
 * The price: two hooks with byte-identical bodies in the same second (a bare account id
 * suspended and unsuspended at once) are one delivery, and the second is refused.
 */
export function hostbillSource(options: HostbillOptions): WebhookSource {
  const key = Buffer.from(options.secret, "utf8");
  const fields = options.fields ?? HOSTBILL_FIELDS;
  const api = options.api ? hostbillApi(options.api) : undefined;
  return {
    source: "hostbill",
    path: "/webhooks/hostbill",
    forms: true,
    schema: panelEventSchema,
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
    async translate(raw, ctx) {
      // Some hooks' $details is the bare account id: a JSON number, or a form of one value.
      const body: Record<string, unknown> =
        typeof raw === "number" || typeof raw === "string" ? { account_id: raw } : raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
      if (Object.keys(body).length === 1 && /^\d+$/.test(Object.keys(body)[0]!) && body[Object.keys(body)[0]!] === "") body.account_id = Object.keys(body)[0];
      const f = (k: HostbillField) => pick(body, fields[k]);
      const hook = hookOf(str(ctx.req.header("hb-event")), str(f("event")));
      if ("errors" in hook) return { kind: "invalid", errors: hook.errors };
      const { eventName, typeFrom } = hook;
      const name = norm(eventName);
      // HB-Signature covers HB-Timestamp and the body, nothing else: the dedupe key comes from
      // those alone (a delivery id only from the body), so a copy posted with other headers is
      // the same delivery. No delivery-id header is documented, and one would not be signed.
      const signedId = deliveryId(f("delivery_id"));
      const signedBytes = `h:${sha256Hex(ctx.req.header("hb-timestamp")?.trim() ?? "", ctx.raw).slice(0, 40)}`;

      if (name === INVOICE_PAID) return invoicePaid(body, fields, signedId, signedBytes, typeFrom);
      const type = ACCOUNT_EVENTS[name];
      if (!type) return { kind: "ignored", reason: `HostBill event "${eventName.slice(0, 60)}" is not one the bridge acts on` };
      // Read as an account hook, an invoice's own id would be taken for the account's.
      if (typeFrom && pick(body, fields["invoice.items"]) !== undefined) {
        return { kind: "invalid", errors: { "HB-Event": [`"${eventName.slice(0, 60)}" is an account hook, but the signed body is an invoice (it lists items); an invoice is read only as after_invoicefullpaid`] } };
      }

      const idRaw = f("service.id");
      const serviceId = str(idRaw);
      if (!serviceId) return { kind: "invalid", errors: { "service.id": ["is required: the hook names no account (account_id, service.id or account.id)"] } };
      const webhookId = signedId ?? signedBytes;
      const from = typeFrom ? { typeFrom } : {};

      if (type === "service.created") {
        const account = api ? await api.account(serviceId) : undefined;
        const a = (k: HostbillField) => (account ? firstScalar(pick(account, fields[k])) : undefined);
        const productRaw = f("service.product_id") ?? a("api.account.product_id");
        const notLicense = notInCatalogue(ctx.catalog, str(productRaw));
        if (notLicense) return { kind: "ignored", reason: notLicense };
        const errors: FieldErrors = {};
        const cycleRaw = f("service.billing_cycle") ?? a("api.account.billing_cycle");
        const cycle = hostbillCycle(cycleRaw);
        if (cycleRaw !== undefined && cycle === undefined) {
          errors["service.billing_cycle"] = [
            `HostBill billing cycle "${String(cycleRaw).slice(0, 40)}" has no licence equivalent (expected m, q, s, a, b, t or Monthly, Quarterly, Semi-Annually, Annually, Biennially, Triennially)`,
          ];
        }
        const clientId = str(f("service.client_id") ?? a("api.account.client_id"));
        const client = api && clientId && f("customer.email") === undefined ? await api.client(clientId) : undefined;
        const c = (k: HostbillField) => (client ? pick(client, fields[k]) : undefined);
        const email = f("customer.email") ?? c("api.client.email");
        const event = {
          type,
          service: compact({
            id: idRaw,
            product_id: productRaw,
            billing_cycle: cycle,
            ip: f("service.ip") ?? a("api.account.ip"),
            customer: {
              email,
              name: fullName(f("customer.firstname") ?? c("api.client.firstname"), f("customer.lastname") ?? c("api.client.lastname")),
            },
            next_due_date: normalizeDate(f("service.next_due_date") ?? a("api.account.next_due_date")),
          }),
        };
        const notes = email === undefined ? [`no customer e-mail (${api ? "HostBill's API has none" : "HostBill's hooks do not carry it: set HOSTBILL_API_URL, HOSTBILL_API_ID and HOSTBILL_API_KEY, or use the HostBill module"}); the install command is not mailed`] : undefined;
        return { kind: "events", events: [{ webhookId, event, errors, ...from }], ...(notes ? { notes } : {}) };
      }

      if (type === "service.product_changed") {
        const newRaw = f("changes.product_id");
        const newProduct = str(newRaw);
        const stored = await ctx.services?.get(serviceId);
        const oldProduct = stored?.product_id ?? str(f("old.product_id"));
        if (newProduct !== undefined && oldProduct === newProduct) return { kind: "ignored", reason: "the package did not change" };
        // Neither product is a licence: ignored unless the bridge knows the service (then the intake names the problem).
        const verdict = catalogueVerdict(ctx.catalog, [oldProduct, newProduct]);
        const event = { type, service: compact({ id: idRaw, product_id: oldProduct }), changes: compact({ product_id: newRaw }) };
        return { kind: "events", events: [{ webhookId, event, ifUnknownService: verdict === "not_licence" ? "ignore" : "conflict", ...from }] };
      }

      const verdict = catalogueVerdict(ctx.catalog, [str(f("service.product_id"))]);
      return { kind: "events", events: [{ webhookId, event: { type, service: { id: idRaw } }, ifUnknownService: verdict === "not_licence" ? "ignore" : "conflict", ...from }] };
    },
  };
}

/**
 * `after_invoicefullpaid`: one `service.renewed` per account the invoice pays. Keyed by invoice
 * and account (an invoice is paid in full once), so a re-signed retry is still a duplicate;
 * `signed` is a delivery id the body carries, `fallback` the key of the signed bytes, for an
 * invoice without an id. An account the bridge does not know (hosting on the same invoice, or the
 * first invoice of an order whose licence is created after payment) is ignored, not 409: a retry
 * must not add a cycle.
 */
function invoicePaid(
  body: Record<string, unknown>,
  fields: FieldMap<HostbillField>,
  signed: string | undefined,
  fallback: string,
  typeFrom: string | undefined,
): Translation {
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

  const base = signed ?? (invoiceId ? `invoice:${invoiceId}` : fallback);
  const events: TranslatedEvent[] = [...accounts].map(([accountId, nextDue]) => ({
    webhookId: `${base}:${accountId}`,
    event: { type: "service.renewed", service: compact({ id: accountId, next_due_date: nextDue }) },
    ifUnknownService: "ignore",
    ...(typeFrom ? { typeFrom } : {}),
  }));
  return { kind: "events", events };
}
