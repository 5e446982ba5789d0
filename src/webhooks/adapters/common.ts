import { createHash, timingSafeEqual } from "node:crypto";
import express, { type Request, type RequestHandler, type Response, type Router } from "express";
import type { BillingCycle, Catalog } from "../../catalog/catalog.js";
import type { ErrorCode } from "../../http/error-codes.js";
import { sendError } from "../../http/errors.js";
import type { Clock } from "../../jobs/clock.js";
import { sameIp } from "../../reseller/ip-address.js";
import type { Logger } from "../../log/logger.js";
import type { ServiceRow } from "../../store/services.js";
import { isJsonContentType, MAX_WEBHOOK_BYTES, type WebhookObserver } from "../billing-route.js";
import { billingEventSchema, fieldErrors, type BillingEvent, type EventType, type FieldErrors } from "../event-schema.js";
import type { AcceptEvents } from "../group-commit.js";
import { str } from "./field-maps.js";

export type AdapterSource = "hostbill" | "upmind" | "blesta";

/** What every adapter route needs: the same intake as the native route, and the catalogue. */
export interface AdapterDeps {
  /** The intake (`groupCommit(db, createIntake(...))`): dedupe, business rules, durable commit. */
  accept: AcceptEvents;
  catalog: Catalog;
  clock: Clock;
  logger: Logger;
  /** Read-only view of the stored licences, for panels whose "updated" hooks carry no old values (Upmind). */
  services?: { get(serviceId: string): ServiceRow | undefined };
  observer?: WebhookObserver;
}

/** One of our events, derived from a panel's hook, before validation. */
export interface TranslatedEvent {
  /** Dedupe key within the source: the panel's delivery id, or one derived from the hook. */
  webhookId: string;
  /** Candidate BillingEvent; validated with billingEventSchema by the route. */
  event: { type: EventType; service: Record<string, unknown>; changes?: Record<string, unknown> };
  /**
   * A service the bridge has never seen: "conflict" answers 409 so the panel retries after the
   * creation (the contract's rule); "ignore" answers 200 ignored (a hook about a service that is
   * not one of our licences, e.g. a hosting account paid on the same invoice).
   */
  ifUnknownService?: "conflict" | "ignore";
  /** Problems found while translating (e.g. a cycle spelling we cannot map), by our field path. */
  errors?: FieldErrors;
}

export type Translation =
  | { kind: "events"; events: TranslatedEvent[] }
  | { kind: "ignored"; reason: string }
  | { kind: "invalid"; errors: FieldErrors };

export interface TranslateContext {
  req: Request;
  raw: Buffer;
  catalog: Catalog;
  services?: AdapterDeps["services"];
  nowMs: number;
}

export interface AuthFailure {
  status: 400 | 401 | 403;
  error: string;
}

export interface AdapterSpec {
  source: AdapterSource;
  /** Express path, e.g. "/webhooks/hostbill". */
  path: string;
  /** Checked on the raw bytes before anything parses them; undefined when the request may pass. */
  authenticate(req: Request, raw: Buffer, nowMs: number): AuthFailure | undefined;
  translate(body: Record<string, unknown>, ctx: TranslateContext): Translation;
  /** The 415 message (e.g. which option in the panel sends JSON). */
  contentTypeHint?: string;
}

type Outcome =
  | { status: "accepted" | "duplicate"; eventId: string }
  | { status: "ignored"; reason: string }
  | { status: "unknown_service" }
  | { status: "invalid"; errors: FieldErrors; code: ErrorCode }
  | { status: "retry_later"; reason: string };

/**
 * The route every panel adapter shares: content type → raw body (64 KiB) → the adapter's
 * authentication → JSON → translation into BillingEvents → billingEventSchema → the intake, one
 * event at a time, in order. Answers as the native route does (202 / 200 duplicate / 409 / 422),
 * plus `200 {"status":"ignored","reason"}` for hooks the bridge does not act on, so the panel does
 * not retry them forever. Body-parser failures (413, 415, 400) go to the app's errorHandler.
 */
export function adapterRouter(spec: AdapterSpec, deps: AdapterDeps): Router {
  const router = express.Router();
  const log = deps.logger.child({ adapter: spec.source });
  const note = (type: string, outcome: string) => deps.observer?.received?.(spec.source, type, outcome);

  router.post(
    spec.path,
    ((req, res, next) => {
      if (!isJsonContentType(req)) {
        note("unknown", "unsupported_media_type");
        return sendError(res, 415, "unsupported_media_type", spec.contentTypeHint ?? "Content-Type must be application/json");
      }
      next();
    }) satisfies RequestHandler,
    express.raw({ type: () => true, limit: MAX_WEBHOOK_BYTES }),
    async (req: Request, res: Response) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const nowMs = deps.clock.now();
      const denied = spec.authenticate(req, raw, nowMs);
      if (denied) {
        note("unknown", denied.status === 403 ? "forbidden" : denied.status === 401 ? "unauthorized" : "invalid");
        log.warn({ status: denied.status, reason: denied.error, ip: req.ip }, "webhook refused");
        return sendError(res, denied.status, denied.status === 403 ? "forbidden" : denied.status === 401 ? "unauthorized" : "bad_request", denied.error);
      }

      let json: unknown;
      try {
        json = JSON.parse(raw.toString("utf8"));
      } catch {
        note("unknown", "bad_json");
        return sendError(res, 400, "bad_json", "Request body is not valid JSON");
      }
      if (json === null || typeof json !== "object" || Array.isArray(json)) {
        note("unknown", "bad_json");
        return sendError(res, 400, "bad_json", "Request body must be a JSON object");
      }

      const t = spec.translate(json as Record<string, unknown>, { req, raw, catalog: deps.catalog, services: deps.services, nowMs });
      if (t.kind === "ignored") {
        note("unknown", "ignored");
        log.info({ reason: t.reason }, "webhook ignored");
        return res.status(200).json({ status: "ignored", reason: t.reason });
      }
      if (t.kind === "invalid") {
        note("unknown", "invalid");
        log.warn({ errors: t.errors }, "webhook could not be translated");
        return sendError(res, 422, "validation", "Validation error", { errors: t.errors });
      }

      // Validate every event before accepting any, so a bad hook stores nothing.
      const valid: { webhookId: string; event: BillingEvent; ifUnknownService: "conflict" | "ignore" }[] = [];
      const errors: FieldErrors = {};
      for (const te of t.events) {
        const parsed = billingEventSchema.safeParse(te.event);
        const own = te.errors ?? {};
        mergeErrors(errors, own);
        // The translation's message says more than the schema's about the same field ("is required").
        if (!parsed.success) mergeErrors(errors, Object.fromEntries(Object.entries(fieldErrors(parsed.error)).filter(([k]) => !(k in own))));
        else if (!te.errors || Object.keys(te.errors).length === 0) {
          valid.push({ webhookId: te.webhookId, event: parsed.data, ifUnknownService: te.ifUnknownService ?? "conflict" });
        }
      }
      if (Object.keys(errors).length > 0) {
        for (const te of t.events) note(te.event.type, "invalid");
        log.warn({ errors }, "webhook failed validation");
        return sendError(res, 422, "validation", "Validation error", { errors });
      }

      // One delivery's events are stored together or not at all (a refused IP change must not leave its renewal behind).
      const results = await deps.accept(spec.source, valid);
      const outcomes: Outcome[] = results.map((r, i) =>
        r.status === "unknown_service" && valid[i]!.ifUnknownService === "ignore"
          ? { status: "ignored", reason: `service ${valid[i]!.event.service.id} is not a licence the bridge manages` }
          : r,
      );
      outcomes.forEach((o, i) => note(valid[i]!.event.type, o.status));
      const multi = valid.length > 1;
      const list = valid.map((v, i) => ({ type: v.event.type, webhook_id: v.webhookId, ...outcomeBody(outcomes[i]!) }));
      const extra = multi ? { events: list } : {};
      res.locals.webhookId = valid.map((v) => v.webhookId).join(",");

      const invalid = outcomes.filter((o): o is Extract<Outcome, { status: "invalid" }> => o.status === "invalid");
      if (invalid.length) {
        const merged: FieldErrors = {};
        for (const o of invalid) mergeErrors(merged, o.errors);
        log.warn({ errors: merged }, "webhook refused by a business rule");
        return sendError(res, 422, invalid.length === 1 ? invalid[0]!.code : "validation", "Validation error", { errors: merged, ...extra });
      }
      const later = outcomes.find((o) => o.status === "retry_later");
      if (later) return sendError(res, 409, "retry_later", later.reason, extra);
      if (outcomes.some((o) => o.status === "unknown_service")) return sendError(res, 409, "unknown_service", "unknown service", extra);
      const accepted = outcomes.find((o) => o.status === "accepted");
      if (accepted && "eventId" in accepted) return res.status(202).json({ event_id: accepted.eventId, status: "accepted", ...extra });
      const duplicate = outcomes.find((o) => o.status === "duplicate");
      if (duplicate && "eventId" in duplicate) return res.status(200).json({ event_id: duplicate.eventId, status: "duplicate", ...extra });
      const reasons = outcomes.map((o) => ("reason" in o ? o.reason : "")).filter(Boolean);
      log.info({ reasons }, "webhook ignored");
      return res.status(200).json({ status: "ignored", reason: [...new Set(reasons)].join("; "), ...extra });
    },
  );
  return router;
}

function outcomeBody(o: Outcome): Record<string, unknown> {
  switch (o.status) {
    case "accepted":
    case "duplicate":
      return { status: o.status, event_id: o.eventId };
    case "ignored":
      return { status: o.status, reason: o.reason };
    case "unknown_service":
      return { status: o.status };
    case "invalid":
      return { status: o.status, errors: o.errors };
    case "retry_later":
      return { status: o.status, reason: o.reason };
  }
}

export function mergeErrors(into: FieldErrors, from: FieldErrors): FieldErrors {
  for (const [k, msgs] of Object.entries(from)) {
    const list = (into[k] ??= []);
    for (const m of msgs) if (!list.includes(m)) list.push(m);
  }
  return into;
}

/** A 404 for an adapter that is not configured, identical to the app's own. */
export function notFoundRouter(path: string): Router {
  const router = express.Router();
  router.all(path, (_req, res) => sendError(res, 404, "not_found", "Not found"));
  return router;
}

// ---- shared translation helpers -------------------------------------------------------------

const MONTHS_TO_CYCLE: Readonly<Record<number, BillingCycle>> = {
  1: "monthly",
  3: "quarterly",
  6: "semiannually",
  12: "annually",
  24: "biennially",
  36: "triennially",
};

/** A billing period in months (1, 3, 6, 12, 24, 36) as our cycle name. */
export function cycleFromMonths(months: number): BillingCycle | undefined {
  return Number.isInteger(months) ? MONTHS_TO_CYCLE[months] : undefined;
}

/** A whole count (months, years) sent as a number or a digit string; NaN otherwise. */
export function numberOrDigits(v: unknown): number {
  return typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : NaN;
}

/** Why a creation hook is ignored when its product (Blesta: package) is not in the catalogue; undefined otherwise. */
export function notInCatalogue(catalog: Catalog, productId: string | undefined, noun: "product" | "package" = "product"): string | undefined {
  return productId !== undefined && !catalog.product(productId) ? `${noun} ${productId} is not in the product catalogue (not a licence product)` : undefined;
}

export interface ServiceChanges {
  /** The delivery id; each event's id is `<delivery>:ip_changed` / `<delivery>:product_changed`. */
  delivery: string;
  /** The service id as the panel sent it. */
  serviceId: unknown;
  oldIp: string | undefined;
  /** The new IP as the panel sent it. */
  newIp: unknown;
  oldProduct: string | undefined;
  /** The new product id as the panel sent it. */
  newProduct: unknown;
  /** For the IP change; the product change is judged on both products. */
  ifUnknownService: "conflict" | "ignore";
}

/**
 * `service.ip_changed` and `service.product_changed`, in that order, from an update hook's old
 * and new values: each only when both values are known and differ.
 */
export function changeEvents(catalog: Catalog, c: ServiceChanges): TranslatedEvent[] {
  const events: TranslatedEvent[] = [];
  const newIp = str(c.newIp);
  if (newIp !== undefined && c.oldIp !== undefined && !sameIp(newIp, c.oldIp)) {
    events.push({
      webhookId: `${c.delivery}:ip_changed`,
      event: { type: "service.ip_changed", service: compact({ id: c.serviceId, ip: c.oldIp }), changes: { ip: c.newIp } },
      ifUnknownService: c.ifUnknownService,
    });
  }
  const newProduct = str(c.newProduct);
  if (newProduct !== undefined && c.oldProduct !== undefined && newProduct !== c.oldProduct) {
    events.push({
      webhookId: `${c.delivery}:product_changed`,
      event: { type: "service.product_changed", service: compact({ id: c.serviceId, product_id: c.oldProduct }), changes: { product_id: c.newProduct } },
      ifUnknownService: catalogueVerdict(catalog, [c.oldProduct, newProduct]) === "not_licence" ? "ignore" : "conflict",
    });
  }
  return events;
}

/**
 * Panels' dates as ISO 8601: "2026-02-01", "2026-02-01 10:00:00" (panels keep UTC; read as
 * UTC), "2026-02-01T10:00:00+02:00". An all-zero date (HostBill, Blesta) means none.
 */
export function normalizeDate(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const s = v.trim();
  if (s === "" || /^0000-00-00/.test(s)) return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(s);
  if (m) return `${m[1]}T${m[2]}${m[3] ?? "Z"}`;
  return s;
}

/** Milliseconds of a panel date, or undefined. */
export function dateMs(v: unknown): number | undefined {
  const s = normalizeDate(v);
  if (typeof s !== "string") return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : ms;
}

/** What the catalogue says about the product ids a hook names. */
export function catalogueVerdict(catalog: Catalog, productIds: (string | undefined)[]): "licence" | "not_licence" | "unknown" {
  const given = productIds.filter((p): p is string => p !== undefined);
  if (given.length === 0) return "unknown";
  return given.some((p) => catalog.product(p) !== undefined) ? "licence" : "not_licence";
}

/** Drops undefined values (and an empty `customer`), so absent fields stay absent. */
export function compact<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const inner = compact(v as Record<string, unknown>);
      if (Object.keys(inner).length === 0) continue;
      out[k] = inner;
    } else out[k] = v;
  }
  return out as T;
}

/** "First Last" from parts, or undefined. */
export function fullName(...parts: unknown[]): string | undefined {
  const s = parts
    .map((p) => (typeof p === "string" ? p.trim() : ""))
    .filter(Boolean)
    .join(" ");
  return s || undefined;
}

export function sha256Hex(...parts: (string | Buffer)[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
}

/** Every plausible decoding of a signature header value: hex, base64 or base64url. */
export function signatureCandidates(value: string): Buffer[] {
  let s = value.trim();
  const eq = /^(?:sha256|v1)[=,]/i.exec(s);
  if (eq) s = s.slice(eq[0].length);
  const out: Buffer[] = [];
  if (/^[0-9a-fA-F]+$/.test(s) && s.length % 2 === 0) out.push(Buffer.from(s, "hex"));
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(s)) out.push(Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64"));
  return out;
}

/** Constant-time: does any candidate equal any expected digest? */
export function anyDigestMatches(expected: readonly Buffer[], candidates: readonly Buffer[]): boolean {
  let ok = false;
  for (const e of expected) {
    for (const c of candidates) {
      if (c.length === e.length && timingSafeEqual(c, e)) ok = true;
    }
  }
  return ok;
}

/** Constant-time string equality of secrets of any length: compares their SHA-256 digests. */
export function secretEquals(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}

/** A delivery id taken from a header or body: printable ASCII, at most 200 characters. */
export function deliveryId(v: unknown): string | undefined {
  const s = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim() : undefined;
  return s && /^[\x21-\x7e]{1,200}$/.test(s) ? s : undefined;
}
