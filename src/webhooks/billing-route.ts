import express, { type Request, type Response, type Router } from "express";
import type { Clock } from "../jobs/clock.js";
import { sendError } from "../http/errors.js";
import { billingEventSchema, fieldErrors } from "./event-schema.js";
import type { AcceptEvents } from "./group-commit.js";
import { verifyWebhook, WebhookVerificationError } from "./signature.js";

export const MAX_WEBHOOK_BYTES = 64 * 1024;

export interface WebhookObserver {
  received?(source: string, type: string, outcome: string): void;
}

export interface BillingRouteDeps {
  accept: AcceptEvents;
  keys: readonly Buffer[];
  clock: Clock;
  observer?: WebhookObserver;
}

/** Accepts application/json and application/*+json, with or without a charset. */
export function isJsonContentType(req: Request): boolean {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || /^application\/[\w.+-]+\+json$/.test(type);
}

/**
 * `POST /webhooks/billing`: Standard Webhooks signature on the raw bytes, then the schema,
 * then the intake transaction; the answer comes only after the event and its job are committed.
 */
export function billingWebhookRouter(deps: BillingRouteDeps): Router {
  const router = express.Router();
  const note = (type: string, outcome: string) => deps.observer?.received?.("billing", type, outcome);

  router.post(
    "/webhooks/billing",
    (req, res, next) => {
      if (!isJsonContentType(req)) {
        note("unknown", "unsupported_media_type");
        return sendError(res, 415, "unsupported_media_type", "Content-Type must be application/json");
      }
      next();
    },
    express.raw({ type: () => true, limit: MAX_WEBHOOK_BYTES }),
    async (req: Request, res: Response) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const webhookId = req.header("webhook-id");
      try {
        verifyWebhook({
          id: webhookId,
          timestamp: req.header("webhook-timestamp"),
          signature: req.header("webhook-signature"),
          body,
          keys: deps.keys,
          nowMs: deps.clock.now(),
        });
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        note("unknown", "unauthorized");
        return sendError(res, 401, "unauthorized", `Invalid signature: ${err.message}`);
      }
      if (webhookId!.length > 256) {
        note("unknown", "invalid");
        return sendError(res, 400, "bad_request", "webhook-id is longer than 256 characters");
      }

      let json: unknown;
      try {
        json = JSON.parse(body.toString("utf8"));
      } catch {
        note("unknown", "bad_json");
        return sendError(res, 400, "bad_json", "Request body is not valid JSON");
      }
      const parsed = billingEventSchema.safeParse(json);
      const type = typeof (json as { type?: unknown })?.type === "string" ? String((json as { type: string }).type).slice(0, 40) : "unknown";
      if (!parsed.success) {
        note(type, "invalid");
        return sendError(res, 422, "validation", "Validation error", { errors: fieldErrors(parsed.error) });
      }

      const result = (await deps.accept("billing", [{ webhookId: webhookId!, event: parsed.data }]))[0]!;
      res.locals.webhookId = webhookId;
      note(parsed.data.type, result.status);
      switch (result.status) {
        case "accepted":
          return res.status(202).json({ event_id: result.eventId, status: "accepted" });
        case "duplicate":
          return res.status(200).json({ event_id: result.eventId, status: "duplicate" });
        case "unknown_service":
          return sendError(res, 409, "unknown_service", "unknown service");
        case "retry_later":
          return sendError(res, 409, "retry_later", result.reason);
        case "invalid":
          return sendError(res, 422, result.code, "Validation error", { errors: result.errors });
      }
    },
  );
  return router;
}
