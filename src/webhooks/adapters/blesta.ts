import { BlockList, isIPv4, isIPv6 } from "node:net";
import { NOT_AN_OBJECT } from "../../validation/field-errors.js";
import type { BillingCycle } from "../../catalog/catalog.js";
import { panelEventSchema, type EventType } from "../../intake/event-schema.js";
import type { TranslateContext, TranslatedEvent, Translation, WebhookSource } from "../route.js";
import { pick, str, type FieldMap } from "./field-maps.js";
import { panelGet } from "./panel-api.js";
import { compact, cycleFromMonths, fullName, normalizeDate, numberOrDigits } from "./panel-values.js";
import { catalogueVerdict, notInCatalogue } from "./catalogue-checks.js";
import { changeEvents } from "./change-events.js";
import { secretEquals, sha256Hex } from "./signatures.js";

/**
 * Blesta's Webhooks plugin (blesta/plugin-webhooks, models/webhooks_events.php::listen) posts an
 * event's own parameters, with no envelope: for Services.* events `service_id`, `vars` (the
 * input of the change), `old_service` (Services::get() before it) and, on add and edit,
 * `service_activated`; the event's name in the `X-Blesta-Event` header (plugin 1.2.1+; before
 * that, put `?event=Services.addAfter` on the webhook's URL). It signs nothing and sends once.
 *
 * The body never holds the client's e-mail, and Services.addAfter holds no package: with
 * BLESTA_API_URL/USER/KEY the bridge reads them from Blesta's API (services/get, clients/get,
 * packages/getByPricingId, invoices/get); without, it does what the body allows and says why
 * for the rest. The field names below are overridable with ADAPTER_FIELD_MAPS_FILE {"blesta": ...};
 * the IP is a service field whose key the module defines (ip, license_ip, ...).
 */
export const BLESTA_FIELDS = {
  event: [],
  "service.id": ["service_id", "old_service.id"],
  activated: ["service_activated"],
  "new.status": ["vars.status"],
  "new.ip": ["vars.ip", "vars.license_ip", "vars.ip_address", "vars.ipaddress"],
  "new.pricing_id": ["vars.pricing_id"],
  "new.date_renews": ["vars.date_renews"],
  "new.date_canceled": ["vars.date_canceled"],
  "old.status": ["old_service.status"],
  "old.pricing_id": ["old_service.pricing_id"],
  "old.product_id": ["old_service.package.id", "old_service.package_pricing.package_id"],
  "old.term": ["old_service.package_pricing.term"],
  "old.period": ["old_service.package_pricing.period"],
  "old.ip": [
    "old_service.fields[key=ip].value",
    "old_service.fields[key=license_ip].value",
    "old_service.fields[key=ip_address].value",
    "old_service.fields[key=ipaddress].value",
  ],
  "old.date_renews": ["old_service.date_renews"],
  client_id: ["vars.client_id", "old_service.client_id"],
  // In the answers of Blesta's API (services/get, clients/get, packages/getByPricingId, invoices/get).
  "api.service.product_id": ["package.id", "package_pricing.package_id"],
  "api.service.term": ["package_pricing.term"],
  "api.service.period": ["package_pricing.period"],
  "api.service.ip": ["fields[key=ip].value", "fields[key=license_ip].value", "fields[key=ip_address].value", "fields[key=ipaddress].value"],
  "api.service.date_renews": ["date_renews"],
  "api.service.client_id": ["client_id"],
  "api.client.email": ["email"],
  "api.client.first_name": ["first_name"],
  "api.client.last_name": ["last_name"],
  "api.package.id": ["id"],
  "api.invoice.service_ids": ["line_items"],
} as const satisfies FieldMap;

export type BlestaField = keyof typeof BLESTA_FIELDS;

/** Statuses of a service that is ordered but not yet paid or approved. */
const NOT_YET_ACTIVE = new Set(["pending", "in_review"]);

/** Blesta's `service_activated` flag (JSON true, or "1" in a form). */
const activatedFlag = (v: unknown) => v === true || v === "1";

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

export interface BlestaApiConfig {
  /** Blesta's API base, e.g. https://billing.example.com/api (or .../index.php/api). */
  url: string;
  user: string;
  key: string;
}

export interface BlestaOptions {
  token: string;
  /** BLESTA_ALLOWED_IPS; unset allows any source. */
  allowedIps?: readonly string[];
  fields?: FieldMap<BlestaField>;
  /** BLESTA_API_URL/USER/KEY: where to read what a delivery lacks. */
  api?: BlestaApiConfig;
}

/** Blesta's REST API (docs.blesta.com, "API"): Basic auth with an API user and key; answers {"response": ...}. */
function blestaApi(config: BlestaApiConfig) {
  const auth = `Basic ${Buffer.from(`${config.user}:${config.key}`).toString("base64")}`;
  const get = async (path: string, query: Record<string, string>): Promise<Record<string, unknown> | undefined> => {
    const url = new URL(`${config.url.replace(/\/+$/, "")}/${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const answer = (await panelGet("Blesta", url, { headers: { authorization: auth } })) as { response?: unknown } | undefined;
    const response = answer?.response;
    return response !== null && typeof response === "object" && !Array.isArray(response) ? (response as Record<string, unknown>) : undefined;
  };
  return {
    service: (id: string) => get("services/get.json", { service_id: id }),
    client: (id: string) => get("clients/get.json", { client_id: id }),
    packageByPricing: (pricingId: string) => get("packages/getByPricingId.json", { pricing_id: pricingId }),
    invoice: (id: string) => get("invoices/get.json", { invoice_id: id }),
  };
}

const API_HINT = "set BLESTA_API_URL, BLESTA_API_USER and BLESTA_API_KEY so the bridge can read it from Blesta's API, or use the Blesta module (integrations/blesta)";

/**
 * `POST /webhooks/blesta/:token`: Blesta signs nothing, so the URL carries the credential
 * (BLESTA_WEBHOOK_TOKEN, compared in constant time), optionally with a source allow-list
 * (BLESTA_ALLOWED_IPS). A disallowed source gets 403 before its token is even looked at. The
 * plugin's "POST" (a form) and "POST JSON" methods are both read.
 */
export function blestaSource(options: BlestaOptions): WebhookSource {
  const fields = options.fields ?? BLESTA_FIELDS;
  const allowed = options.allowedIps?.length ? ipAllowList(options.allowedIps) : undefined;
  const api = options.api ? blestaApi(options.api) : undefined;

  return {
    source: "blesta",
    path: "/webhooks/blesta/:token",
    forms: true,
    schema: panelEventSchema,
    contentTypeHint: "Content-Type must be application/json or a form: set the Blesta webhook's method to POST JSON or POST",
    authenticate(req) {
      if (allowed && !allowed(req.ip ?? req.socket.remoteAddress)) return { status: 403, error: "Forbidden: source address not allowed" };
      const token = typeof req.params.token === "string" ? req.params.token : "";
      if (!secretEquals(token, options.token)) return { status: 401, error: "Invalid token" };
      return undefined;
    },
    async translate(raw, ctx) {
      if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { kind: "invalid", errors: { "(body)": [`${NOT_AN_OBJECT} or a form`] } as Record<string, string[]> };
      const body = raw as Record<string, unknown>;
      const f = (k: BlestaField) => pick(body, fields[k]);
      const query = typeof ctx.req.query.event === "string" ? ctx.req.query.event : undefined;
      const eventName = str(ctx.req.header("x-blesta-event")) ?? str(query) ?? str(pick(body, fields.event));
      if (!eventName) return { kind: "invalid", errors: { event: ["is required: the X-Blesta-Event header (Webhooks plugin 1.2.1+), or ?event= on the webhook URL"] } };
      const name = eventName.toLowerCase();
      if (name === "invoices.setclosedafter") return invoicePaid(body, ctx);

      const idRaw = f("service.id");
      const serviceId = str(idRaw);
      if (!name.startsWith("services.") || !serviceId) return { kind: "ignored", reason: `Blesta event "${eventName.slice(0, 60)}" is not one the bridge acts on` };
      // No delivery id: X-Webhook-Id names the webhook, and a manual resend posts the same stored fields.
      const delivery = `${eventName}:${serviceId}:${sha256Hex(ctx.raw).slice(0, 32)}`;
      const oldProduct = str(f("old.product_id"));
      const ifUnknownService = catalogueVerdict(ctx.catalog, [oldProduct]) === "not_licence" ? "ignore" : "conflict";
      const simple = (type: EventType): Translation => ({ kind: "events", events: [{ webhookId: delivery, event: { type, service: { id: idRaw } }, ifUnknownService }] });

      switch (name) {
        case "services.addafter": {
          const activated = activatedFlag(f("activated")) || str(f("new.status")) === "active";
          if (!activated) return { kind: "ignored", reason: "the service is not active yet; its licence is bought when Blesta activates it (Services.editAfter)" };
          return created(delivery, serviceId, body, ctx);
        }
        case "services.editafter":
          return edited(delivery, serviceId, body, ctx, ifUnknownService);
        case "services.suspendafter":
          return simple("service.suspended");
        case "services.unsuspendafter":
          return simple("service.unsuspended");
        case "services.cancelafter": {
          // cancelAfter also fires when a cancellation is only scheduled (end of term): then vars.status is absent.
          if (str(f("new.status")) !== "canceled") {
            const when = str(normalizeDate(f("new.date_canceled")) as string);
            return { kind: "ignored", reason: `a cancellation scheduled${when ? ` for ${when}` : ""}; the licence is terminated when Blesta carries it out` };
          }
          return simple("service.terminated");
        }
        default:
          return { kind: "ignored", reason: `Blesta event "${eventName.slice(0, 60)}" is not one the bridge acts on` };
      }
    },
  };

  /** A service Blesta activated: the order, from the body and (when configured) Blesta's API. */
  async function created(webhookId: string, serviceId: string, body: Record<string, unknown>, ctx: TranslateContext): Promise<Translation> {
    const f = (k: BlestaField) => pick(body, fields[k]);
    const fetched = api ? await api.service(serviceId) : undefined;
    const a = (k: BlestaField) => (fetched ? pick(fetched, fields[k]) : undefined);
    const productRaw = a("api.service.product_id") ?? f("old.product_id");
    const productId = str(productRaw);
    if (productId === undefined) return { kind: "invalid", errors: { "service.product_id": [`Blesta's ${api ? "API has no package for this service" : `Services.addAfter carries no package: ${API_HINT}`}`] } };
    const notLicense = notInCatalogue(ctx.catalog, productId, "package");
    if (notLicense) return { kind: "ignored", reason: notLicense };

    const term = a("api.service.term") ?? f("old.term");
    const period = a("api.service.period") ?? f("old.period");
    const cycle = blestaCycle(term, period);
    const clientId = str(a("api.service.client_id") ?? f("client_id"));
    const client = api && clientId ? await api.client(clientId) : undefined;
    const c = (k: BlestaField) => (client ? pick(client, fields[k]) : undefined);
    const event = {
      type: "service.created" as const,
      service: compact({
        id: serviceId,
        product_id: productRaw,
        billing_cycle: cycle,
        ip: a("api.service.ip") ?? f("new.ip") ?? f("old.ip"),
        customer: { email: c("api.client.email"), name: fullName(c("api.client.first_name"), c("api.client.last_name")) },
        next_due_date: normalizeDate(a("api.service.date_renews") ?? f("new.date_renews")),
      }),
    };
    const errors =
      (term !== undefined || period !== undefined) && cycle === undefined
        ? { "service.billing_cycle": [`Blesta term "${String(term ?? "").slice(0, 10)} ${String(period ?? "").slice(0, 10)}" has no licence equivalent (expected 1, 3 or 6 month, or 1, 2 or 3 year)`] }
        : undefined;
    const notes = client ? undefined : [`no customer e-mail (${api ? "the client has none" : `Blesta does not send it: ${API_HINT}`}); the install command is not mailed`];
    return { kind: "events", events: [{ webhookId, event, ...(errors ? { errors } : {}) }], ...(notes ? { notes } : {}) };
  }

  /** Services.editAfter: an activation, an IP change, a package change; `vars` holds only what changed. */
  async function edited(
    delivery: string,
    serviceId: string,
    body: Record<string, unknown>,
    ctx: TranslateContext,
    ifUnknownService: "conflict" | "ignore",
  ): Promise<Translation> {
    const f = (k: BlestaField) => pick(body, fields[k]);
    const oldStatus = str(f("old.status"))?.toLowerCase();
    const activated = activatedFlag(f("activated")) || (oldStatus !== undefined && NOT_YET_ACTIVE.has(oldStatus) && str(f("new.status")) === "active");
    if (activated) return created(`${delivery}:created`, serviceId, body, ctx);

    const notes: string[] = [];
    let newProduct: unknown;
    const newPricing = str(f("new.pricing_id"));
    if (newPricing !== undefined && newPricing !== str(f("old.pricing_id"))) {
      if (api) newProduct = pick(await api.packageByPricing(newPricing), fields["api.package.id"]);
      else notes.push(`the pricing changed to ${newPricing}; whether the package changed too is not in the delivery: ${API_HINT}`);
    }
    // Moving the renew date is not a payment (Blesta moves it when it invoices): renewals come from Invoices.setClosedAfter.
    const events: TranslatedEvent[] = changeEvents(ctx.catalog, {
      delivery,
      serviceId,
      oldIp: str(f("old.ip")),
      newIp: f("new.ip"),
      oldProduct: str(f("old.product_id")),
      newProduct,
      ifUnknownService,
    });
    if (events.length === 0) return { kind: "ignored", reason: ["no change the bridge acts on (IP and package unchanged)", ...notes].join("; ") };
    return { kind: "events", events, ...(notes.length ? { notes } : {}) };
  }

  /**
   * Invoices.setClosedAfter (`invoice_id`): an invoice was paid. Each of its lines for a service
   * becomes `service.renewed` up to the service's renew date, read from Blesta's API.
   */
  async function invoicePaid(body: Record<string, unknown>, ctx: TranslateContext): Promise<Translation> {
    const invoiceId = str(body.invoice_id);
    if (!invoiceId) return { kind: "ignored", reason: "Invoices.setClosedAfter without an invoice_id" };
    if (!api) return { kind: "ignored", reason: `an invoice was paid, but which services it renews is not in the delivery: ${API_HINT}` };
    const invoice = await api.invoice(invoiceId);
    const lines = pick(invoice, fields["api.invoice.service_ids"]);
    const serviceIds = new Set<string>();
    for (const line of Array.isArray(lines) ? lines : lines && typeof lines === "object" ? Object.values(lines) : []) {
      const id = str((line as Record<string, unknown> | null)?.service_id);
      if (id && id !== "0") serviceIds.add(id);
    }
    if (serviceIds.size === 0) return { kind: "ignored", reason: `invoice ${invoiceId} pays no service` };
    const events: TranslatedEvent[] = [];
    for (const id of serviceIds) {
      // Services the bridge does not manage (hosting on the same invoice) are skipped without asking Blesta.
      if (ctx.services && !(await ctx.services.get(id))) continue;
      const service = await api.service(id);
      const renews = normalizeDate(service ? pick(service, fields["api.service.date_renews"]) : undefined);
      events.push({
        // Paid once: a resend of the same invoice's closing is a duplicate.
        webhookId: `invoice:${invoiceId}:${id}`,
        event: { type: "service.renewed", service: compact({ id, next_due_date: renews }) },
        ifUnknownService: "ignore",
      });
    }
    if (events.length === 0) return { kind: "ignored", reason: `invoice ${invoiceId} pays no licence the bridge manages` };
    return { kind: "events", events };
  }
}
