import express, { type Router } from "express";
import { runAdoption, type AdoptionDeps } from "../adoption/adopt.js";
import { adoptBodySchema, fieldPath, parseRows } from "../adoption/rows.js";
import type { Logger } from "../log/logger.js";
import { LicenceListError } from "../reconcile/lists.js";
import { ResellerError } from "../reseller/errors.js";
import { isJsonContentType } from "../webhooks/route.js";
import { auditFor } from "../http/auth.js";
import { AUDIT_ACTIONS } from "../vocabulary/audit.js";
import { adminAccess, type AdminAccessDeps } from "./permissions.js";
import { sendError } from "../http/errors.js";
import { hasBody } from "../http/request-body.js";
import type { FieldErrors } from "../validation/field-errors.js";

export interface AdoptRouteDeps extends AdoptionDeps, Pick<AdminAccessDeps, "operators" | "failures"> {
  logger?: Logger;
}

/** A whole panel's export: 200,000 rows of a few hundred bytes each. */
const BODY_LIMIT = "64mb";

/** The 422 of a refused import: every wrong field, and the first of them on its own for a quick look. */
function refuse(res: express.Response, errors: FieldErrors): void {
  sendError(res, 422, "validation", "Validation error", { field: Object.keys(errors)[0], errors });
}

/**
 * `POST /admin/adopt`: a panel's running services against each configured provider's licence list: the plan,
 * and with `"apply": true` the adoptions written (`"buy": true` also orders what is missing).
 */
export function adoptRouter(deps: AdoptRouteDeps): Router {
  const router = express.Router();
  // One at a time: two applies of one import would race each other for the same rows.
  let running = false;

  const jsonOnly: express.RequestHandler = (req, res, next) => {
    if (hasBody(req) && !isJsonContentType(req)) return sendError(res, 415, "unsupported_media_type", "Content-Type must be application/json");
    next();
  };

  router.post("/admin/adopt", ...adminAccess({ operators: deps.operators, failures: deps.failures, audit: deps.store.audit, services: deps.store.services }), jsonOnly, express.json({ limit: BODY_LIMIT, type: () => true }), async (req, res) => {
    const body = adoptBodySchema.safeParse(req.body ?? {});
    if (!body.success) {
      const errors: FieldErrors = Object.create(null) as FieldErrors;
      for (const issue of body.error.issues) {
        const keys = issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
        for (const path of keys) (errors[fieldPath(path)] ??= []).push(issue.code === "unrecognized_keys" ? "is not a known field" : issue.message);
      }
      return refuse(res, errors);
    }
    const { services, apply = false, buy = false, mail = false } = body.data;
    if ((buy || mail) && !apply) return refuse(res, { [buy ? "buy" : "mail"]: ['takes effect only with "apply": true'] });
    const rows = parseRows(services);
    if (!rows.ok) return refuse(res, rows.errors);
    if (running) return sendError(res, 409, "conflict", "an adoption is already running; try again when it has finished");
    running = true;
    try {
      res.json(await runAdoption(deps, rows.rows, { apply, buy, mail, ...(apply ? { audit: auditFor(res, AUDIT_ACTIONS.adoptApply) } : {}) }));
    } catch (err) {
      if (err instanceof LicenceListError) {
        deps.logger?.warn({ err, provider: err.source.provider }, "adopt: a provider's licence list is unavailable");
        return sendError(res, 502, "upstream_unavailable", err.message, { provider: err.source.provider });
      }
      if (!(err instanceof ResellerError)) throw err;
      deps.logger?.warn({ err }, "adopt: the reseller's licence list is unavailable");
      sendError(res, 502, "upstream_unavailable", `cannot read the reseller's licence list: ${err.message}`);
    } finally {
      running = false;
    }
  });

  return router;
}
