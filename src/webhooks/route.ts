import express, { type Request, type Response, type Router } from "express";
import { parse as parseForm } from "qs";
import type { z } from "zod";
import type { Catalog } from "../catalog/catalog.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import { sendError } from "../http/errors.js";
import { sendJson } from "../http/send-json.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log/logger.js";
import type { ServiceRow } from "../store/store.js";
import { fieldErrors, type BillingEvent, type EventType, type FieldErrors } from "../intake/event-schema.js";
import type { Intake } from "../intake/intake.js";

export const MAX_WEBHOOK_BYTES = 64 * 1024;

/** Counts deliveries for /metrics. */
export interface WebhookObserver {
  received?(source: string, type: string, outcome: string): void;
}

/** One of our events, derived from a delivery, before validation. */
export interface TranslatedEvent {
  /** Dedupe key within the source: the delivery's id, or one derived from it. */
  webhookId: string;
  /** Candidate BillingEvent; validated with the source's schema by the route. */
  event: { type: EventType; service: Record<string, unknown>; changes?: Record<string, unknown> } | Record<string, unknown>;
  /**
   * A service the bridge has never seen: "conflict" answers 409 so the panel retries after the
   * creation (the contract's rule); "ignore" answers 200 ignored (a hook about a service that is
   * not one of our licences, e.g. a hosting account paid on the same invoice).
   */
  ifUnknownService?: "conflict" | "ignore";
  /** Problems found while translating (e.g. a cycle spelling we cannot map), by our field path. */
  errors?: FieldErrors;
  /**
   * The input outside the signature that chose the event's type (HostBill's `HB-Event` header),
   * when one did. `webhookId` must then come from signed content alone, so a copy with that input
   * changed finds the event stored first: one of another type is refused (409), naming the input.
   */
  typeFrom?: string;
}

export type Translation =
  | { kind: "events"; events: TranslatedEvent[]; notes?: string[] }
  | { kind: "ignored"; reason: string }
  | { kind: "invalid"; errors: FieldErrors }
  | { kind: "bad_request"; error: string };

export interface TranslateContext {
  req: Request;
  raw: Buffer;
  catalog: Catalog;
  /** Read-only view of the stored licences, for panels whose "updated" hooks carry no old values. */
  services?: { get(serviceId: string): Promise<ServiceRow | undefined> };
  nowMs: number;
  logger: Logger;
}

export interface AuthFailure {
  status: 400 | 401 | 403;
  error: string;
}

/**
 * A panel that sends webhooks: how its deliveries are authenticated and what they mean. Every
 * source goes through the same route (webhookRouter), so a fix to the pipeline is a fix to all.
 */
export interface WebhookSource {
  /** Names the source in the events table (dedupe is per source), metrics and logs. */
  source: string;
  /** Express path, e.g. "/webhooks/hostbill". */
  path: string;
  /** Body encodings the panel may use: JSON always, forms for panels that post them. */
  forms?: boolean;
  /** The 415 message (e.g. which option in the panel sends JSON). */
  contentTypeHint?: string;
  /** Checked on the raw bytes before anything parses them; undefined when the request may pass. */
  authenticate(req: Request, raw: Buffer, nowMs: number): AuthFailure | undefined;
  /** The delivery as our events. May ask the panel's own API for what the delivery lacks. */
  translate(body: unknown, ctx: TranslateContext): Translation | Promise<Translation>;
  /** What each translated event must satisfy. */
  schema: z.ZodType<BillingEvent>;
}

export interface WebhookRouteDeps {
  /** The intake: dedupe, business rules, durable commit of a delivery's events, all or none. */
  accept: Intake;
  catalog: Catalog;
  clock: Clock;
  logger: Logger;
  services?: TranslateContext["services"];
  observer?: WebhookObserver;
}

type Outcome =
  | { status: "accepted" | "duplicate"; eventId: string }
  | { status: "conflict"; eventId: string; errors: FieldErrors }
  | { status: "ignored"; reason: string }
  | { status: "unknown_service" }
  | { status: "invalid"; errors: FieldErrors; code: ErrorCode }
  | { status: "retry_later"; reason: string };

const isJson = (type: string) => type === "application/json" || /^application\/[\w.+-]+\+json$/.test(type);
const mediaType = (req: Request) => (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();

/** Accepts application/json and application/*+json, with or without a charset. */
export function isJsonContentType(req: Request): boolean {
  return isJson(mediaType(req));
}

/**
 * The one webhook route: content type → raw body (64 KiB) → the source's authentication (on the
 * raw bytes) → JSON or form → the source's translation → its schema → the intake, a delivery's
 * events together → the answer: 202 accepted / 200 duplicate / 200 ignored / 409 / 422, with
 * `events` listing each when a delivery became several. Nothing is stored for a refused delivery.
 */
export function webhookRouter(source: WebhookSource, deps: WebhookRouteDeps): Router {
  const router = express.Router();
  const log = deps.logger.child({ source: source.source });
  const note = (type: string, outcome: string) => deps.observer?.received?.(source.source, type, outcome);

  const readRaw = express.raw({ type: () => true, limit: MAX_WEBHOOK_BYTES });

  // One handler, not a route of three (type check, body, delivery): each layer the router walks
  // costs a `next` call and its bookkeeping on every delivery.
  router.post(source.path, (req, res, next) => {
    const type = mediaType(req);
    const json = isJson(type);
    if (!json && !(source.forms && type === "application/x-www-form-urlencoded")) {
      note("unknown", "unsupported_media_type");
      return sendError(res, 415, "unsupported_media_type", source.contentTypeHint ?? "Content-Type must be application/json");
    }
    readRaw(req, res, (err?: unknown) => {
      if (err) return next(err);
      deliver(req, res, json).catch(next);
    });
  });

  async function deliver(req: Request, res: Response, json: boolean) {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const nowMs = deps.clock.now();
    const denied = source.authenticate(req, raw, nowMs);
    if (denied) {
      note("unknown", denied.status === 403 ? "forbidden" : denied.status === 401 ? "unauthorized" : "invalid");
      log.warn({ status: denied.status, reason: denied.error }, "webhook refused");
      const code: ErrorCode = denied.status === 403 ? "forbidden" : denied.status === 401 ? "unauthorized" : "bad_request";
      return sendError(res, denied.status, code, denied.error);
    }

    let body: unknown;
    const text = raw.toString("utf8");
    if (json) {
      try {
        body = JSON.parse(text);
      } catch {
        note("unknown", "bad_json");
        return sendError(res, 400, "bad_json", "Request body is not valid JSON");
      }
    } else {
      // PHP's http_build_query nesting (vars[status]=active), as Blesta and HostBill post forms.
      body = parseForm(text, { depth: 10, arrayLimit: 200, parameterLimit: 1000, allowPrototypes: false });
    }

    const translated = source.translate(body, { req, raw, catalog: deps.catalog, services: deps.services, nowMs, logger: log });
    // Most sources translate without a look-up: no turn of the event loop spent waiting on nothing.
    const t = translated instanceof Promise ? await translated : translated;
    if (t.kind === "bad_request") {
      note("unknown", "bad_json");
      return sendError(res, 400, "bad_json", t.error);
    }
    if (t.kind === "ignored") {
      note("unknown", "ignored");
      log.info({ reason: t.reason }, "webhook ignored");
      return sendJson(res, 200, { status: "ignored", reason: t.reason });
    }
    if (t.kind === "invalid") {
      note("unknown", "invalid");
      log.warn({ errors: t.errors }, "webhook could not be translated");
      return sendError(res, 422, "validation", "Validation error", { errors: t.errors });
    }

    // Validate every event before accepting any, so a bad delivery stores nothing.
    const valid: { webhookId: string; event: BillingEvent; ifUnknownService: "conflict" | "ignore"; typeFrom?: string }[] = [];
    const errors: FieldErrors = Object.create(null) as FieldErrors;
    for (const te of t.events) {
      const parsed = source.schema.safeParse(te.event);
      const own = te.errors ?? {};
      mergeErrors(errors, own);
      // The translation's message says more than the schema's about the same field ("is required").
      if (!parsed.success) mergeErrors(errors, Object.fromEntries(Object.entries(fieldErrors(parsed.error)).filter(([k]) => !(k in own))));
      else if (Object.keys(own).length === 0) {
        valid.push({ webhookId: te.webhookId, event: parsed.data, ifUnknownService: te.ifUnknownService ?? "conflict", ...(te.typeFrom ? { typeFrom: te.typeFrom } : {}) });
      }
    }
    const typeOf = (te: TranslatedEvent) => {
      const type = te.event !== null && typeof te.event === "object" ? (te.event as { type?: unknown }).type : undefined;
      return typeof type === "string" ? type.slice(0, 40) : "unknown";
    };
    if (Object.keys(errors).length > 0) {
      for (const te of t.events) note(typeOf(te), "invalid");
      log.warn({ errors }, "webhook failed validation");
      return sendError(res, 422, "validation", "Validation error", { errors });
    }

    const results = await deps.accept(source.source, valid);
    const outcomes: Outcome[] = results.map((r, i): Outcome => {
      const v = valid[i]!;
      if (r.status === "unknown_service" && v.ifUnknownService === "ignore") return { status: "ignored", reason: `service ${v.event.service.id} is not a licence the bridge manages` };
      if (r.status === "duplicate" && v.typeFrom && r.type !== v.event.type) {
        const why = `the same signed content was accepted as ${r.type} (event ${r.eventId}); ${v.typeFrom} is not signed, so a copy naming another event is refused`;
        return { status: "conflict", eventId: r.eventId, errors: { [v.typeFrom]: [why] } };
      }
      if (r.status === "duplicate") return { status: "duplicate", eventId: r.eventId };
      return r;
    });
    outcomes.forEach((o, i) => note(valid[i]!.event.type, o.status));
    res.locals.webhookId = valid.map((v) => v.webhookId).join(",");
    // One event and no notes, as nearly every delivery is: nothing more to say than its outcome.
    const extra =
      valid.length < 2 && !t.notes?.length
        ? NOTHING_MORE
        : {
            ...(valid.length > 1 ? { events: valid.map((v, i) => ({ type: v.event.type, webhook_id: v.webhookId, ...outcomeBody(outcomes[i]!) })) } : {}),
            ...(t.notes?.length ? { notes: t.notes } : {}),
          };

    const invalid = outcomes.filter((o): o is Extract<Outcome, { status: "invalid" }> => o.status === "invalid");
    if (invalid.length) {
      const merged: FieldErrors = {};
      for (const o of invalid) mergeErrors(merged, o.errors);
      log.warn({ errors: merged }, "webhook refused by a business rule");
      return sendError(res, 422, invalid.length === 1 ? invalid[0]!.code : "validation", "Validation error", { errors: merged, ...extra });
    }
    const conflicts = outcomes.filter((o): o is Extract<Outcome, { status: "conflict" }> => o.status === "conflict");
    if (conflicts.length) {
      const merged: FieldErrors = {};
      for (const o of conflicts) mergeErrors(merged, o.errors);
      log.warn({ errors: merged }, "webhook refused: an unsigned header contradicts an accepted delivery");
      return sendError(res, 409, "conflict", "Conflict with an accepted delivery", { errors: merged, ...extra });
    }
    const later = outcomes.find((o) => o.status === "retry_later");
    if (later) return sendError(res, 409, "retry_later", later.reason, extra);
    if (outcomes.some((o) => o.status === "unknown_service")) return sendError(res, 409, "unknown_service", "unknown service", extra);
    const withEvent = (status: "accepted" | "duplicate") => outcomes.find((o): o is Extract<Outcome, { eventId: string }> => o.status === status);
    const accepted = withEvent("accepted");
    if (accepted) return sendJson(res, 202, { event_id: accepted.eventId, status: "accepted", ...extra });
    const duplicate = withEvent("duplicate");
    if (duplicate) return sendJson(res, 200, { event_id: duplicate.eventId, status: "duplicate", ...extra });
    const reasons = outcomes.map((o) => ("reason" in o ? o.reason : "")).filter(Boolean);
    log.info({ reasons }, "webhook ignored");
    return sendJson(res, 200, { status: "ignored", reason: [...new Set(reasons)].join("; "), ...extra });
  }
  return router;
}

const NOTHING_MORE: Readonly<Record<string, unknown>> = Object.freeze({});

function outcomeBody(o: Outcome): Record<string, unknown> {
  switch (o.status) {
    case "accepted":
    case "duplicate":
      return { status: o.status, event_id: o.eventId };
    case "ignored":
    case "retry_later":
      return { status: o.status, reason: o.reason };
    case "unknown_service":
      return { status: o.status };
    case "invalid":
    case "conflict":
      return { status: o.status, errors: o.errors };
  }
}

export function mergeErrors(into: FieldErrors, from: FieldErrors): FieldErrors {
  for (const [k, msgs] of Object.entries(from)) {
    const list = (into[k] ??= []);
    for (const m of msgs) if (!list.includes(m)) list.push(m);
  }
  return into;
}

/** A 404 for a source that is not configured, identical to the app's own. */
export function notFoundRouter(path: string): Router {
  const router = express.Router();
  router.all(path, (_req, res) => sendError(res, 404, "not_found", "Not found"));
  return router;
}
