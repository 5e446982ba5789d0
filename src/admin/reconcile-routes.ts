import express, { type Router } from "express";
import { z } from "zod";
import { isJsonContentType } from "../webhooks/route.js";
import { fieldErrors } from "../intake/event-schema.js";
import { requireBearer } from "../http/auth.js";
import { sendError } from "../http/errors.js";
import { hasBody } from "../http/request-body.js";
import { ADMIN_TOKEN_ACTOR } from "../vocabulary/roles.js";
import type { AdminActions } from "./actions.js";
import { sendOutcome } from "./admin-routes.js";

export interface ReconcileRouteDeps {
  /** Every accepted admin token (ADMIN_TOKEN). */
  adminToken: string | readonly string[];
  /** The reconcile itself (one at a time, role-checked), as the console calls it too. */
  actions: AdminActions;
}

export const reconcileBodySchema = z.strictObject({
  fix: z.boolean({ error: "must be true or false" }).optional(),
});

/** `POST /admin/reconcile`: the bridge against the reseller's licence list; `{"fix": true}` repairs what needs no purchase. */
export function reconcileRouter(deps: ReconcileRouteDeps): Router {
  const router = express.Router();

  // A body that is not JSON would be ignored by the JSON parser, turning `fix=true` into a
  // silent dry run: refuse it instead.
  const jsonOnly: express.RequestHandler = (req, res, next) => {
    if (hasBody(req) && !isJsonContentType(req)) return sendError(res, 415, "unsupported_media_type", "Content-Type must be application/json");
    next();
  };

  router.post("/admin/reconcile", requireBearer(deps.adminToken), jsonOnly, express.json({ limit: "64kb", type: () => true }), async (req, res) => {
    const body = reconcileBodySchema.safeParse(req.body ?? {});
    if (!body.success) return sendError(res, 422, "validation", "Validation error", { errors: fieldErrors(body.error) });
    // Every ADMIN_TOKEN is the admin named "admin" (named operators: issue 26).
    const actor = { name: ADMIN_TOKEN_ACTOR, role: "admin" as const };
    sendOutcome(res, await deps.actions.reconcile(actor, { fix: body.data.fix ?? false }), (result) => res.json(result));
  });

  return router;
}
