import { billingEventSchema } from "../intake/event-schema.js";
import { NOT_AN_OBJECT } from "../validation/field-errors.js";
import type { WebhookSource } from "./route.js";
import { verifyWebhook, WebhookVerificationError } from "./signature.js";

/**
 * `POST /webhooks/billing` (service-contract.md section 2): a Standard Webhooks signature on the
 * raw bytes, `webhook-id` as the idempotency key, the body one BillingEvent as it is.
 */
export function billingSource(keys: readonly Buffer[]): WebhookSource {
  return {
    source: "billing",
    path: "/webhooks/billing",
    schema: billingEventSchema,
    authenticate(req, raw, nowMs) {
      try {
        verifyWebhook({
          id: req.header("webhook-id"),
          timestamp: req.header("webhook-timestamp"),
          signature: req.header("webhook-signature"),
          body: raw,
          keys,
          nowMs,
        });
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        return { status: 401, error: `Invalid signature: ${err.message}` };
      }
      if (req.header("webhook-id")!.length > 256) return { status: 400, error: "webhook-id is longer than 256 characters" };
      return undefined;
    },
    translate(body, ctx) {
      // JSON, but a list or a plain value: what is wrong is the body's shape, not its syntax.
      if (body === null || typeof body !== "object" || Array.isArray(body)) return { kind: "invalid", errors: { "(body)": [NOT_AN_OBJECT] } };
      return { kind: "events", events: [{ webhookId: ctx.req.header("webhook-id")!, event: body as Record<string, unknown> }] };
    },
  };
}
