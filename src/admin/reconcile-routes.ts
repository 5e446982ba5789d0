import express, { type Router } from "express";
import { z } from "zod";
import type { Logger } from "../log/logger.js";
import { LicenceListError, reconcile, type ReconcileDeps } from "../reconcile/reconcile.js";
import { ResellerError } from "../reseller/errors.js";
import { isJsonContentType } from "../webhooks/route.js";
import { fieldErrors } from "../intake/event-schema.js";
import { auditFor } from "../http/auth.js";
import { AUDIT_ACTIONS } from "../vocabulary/audit.js";
import { adminAccess, allowOrRefuse, permissionOf, requiredRole, type AdminAccessDeps } from "./permissions.js";
import { sendError } from "../http/errors.js";
import { hasBody } from "../http/request-body.js";
import { reconcileSummary } from "./reconcile-summary.js";

export { reconcileSummary };

export interface ReconcileRouteDeps extends ReconcileDeps, Omit<AdminAccessDeps, "audit" | "services"> {
  logger?: Logger;
}

export const reconcileBodySchema = z.strictObject({
  fix: z.boolean({ error: "must be true or false" }).optional(),
});


/** `POST /admin/reconcile`: the bridge against each configured provider's licence list; `{"fix": true}` repairs what needs no purchase. */
export function reconcileRouter(deps: ReconcileRouteDeps): Router {
  const router = express.Router();
  // One at a time: two repairs of the same drift would suspend twice and write history twice.
  let running = false;

  // A body that is not JSON would be ignored by the JSON parser, turning `fix=true` into a
  // silent dry run: refuse it instead.
  const jsonOnly: express.RequestHandler = (req, res, next) => {
    if (hasBody(req) && !isJsonContentType(req)) return sendError(res, 415, "unsupported_media_type", "Content-Type must be application/json");
    next();
  };

  const access = { operators: deps.operators, failures: deps.failures, audit: deps.store.audit, services: deps.store.services };
  router.post("/admin/reconcile", ...adminAccess(access), jsonOnly, express.json({ limit: "64kb", type: () => true }), async (req, res) => {
    const body = reconcileBodySchema.safeParse(req.body ?? {});
    if (!body.success) return sendError(res, 422, "validation", "Validation error", { errors: fieldErrors(body.error) });
    const fix = body.data.fix ?? false;
    // Looking is an operator's; a repair needs the role the table gives `fix` (an admin's).
    const route = permissionOf("POST", "/admin/reconcile");
    if (!(await allowOrRefuse(access, res, requiredRole("POST", route.path, { fix }), { method: "POST", path: route.path, action: route.action }))) return;
    if (running) return sendError(res, 409, "conflict", "a reconcile is already running; try again when it has finished");
    running = true;
    const audit = fix ? auditFor(res, AUDIT_ACTIONS.reconcileRepair) : undefined;
    try {
      const result = await reconcile(deps, { fix, audit });
      if (audit) await deps.store.audit.record({ ...audit, action: AUDIT_ACTIONS.reconcileFix, outcome: "ok", detail: reconcileSummary(result) });
      res.json(result);
    } catch (err) {
      if (audit) {
        await deps.store.audit.record({ ...audit, action: AUDIT_ACTIONS.reconcileFix, outcome: "failed", detail: (err as Error).message });
      }
      if (err instanceof LicenceListError) {
        deps.logger?.warn({ err, provider: err.source.provider }, "reconcile: a provider's licence list is unavailable");
        return sendError(res, 502, "upstream_unavailable", err.message, { provider: err.source.provider });
      }
      if (!(err instanceof ResellerError)) throw err;
      deps.logger?.warn({ err }, "reconcile: the reseller's licence list is unavailable");
      sendError(res, 502, "upstream_unavailable", `cannot read the reseller's licence list: ${err.message}`);
    } finally {
      running = false;
    }
  });

  return router;
}
