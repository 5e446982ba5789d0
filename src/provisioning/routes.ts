import express, { type Request, type Router } from "express";
import { requireBearer } from "../http/auth.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import { sendError } from "../http/errors.js";
import { hasBody } from "../http/request-body.js";
import { NOT_AN_OBJECT } from "../validation/field-errors.js";
import type { Logger } from "../log/logger.js";
import type { ServiceOps } from "../store/store.js";
import { isOutdated, MIN_MODULE_VERSION, moduleClientOf, moduleLabel } from "./module-clients.js";
import { PROVISIONING_CALLS, type Provisioning } from "./provisioning.js";

export const MAX_PARAMETERS_BYTES = 64 * 1024;

export interface ProvisioningRouteDeps {
  /** Every accepted provisioning token (PROVISIONING_TOKEN). */
  token: string | readonly string[];
  provisioning: Provisioning;
  /** Where the calling module (its User-Agent) is recorded per service. */
  services: Pick<ServiceOps, "noteModule" | "byLicenseKey">;
  logger: Logger;
  /** Counts calls by module for /metrics. */
  observer?: { called?(call: string, module: string, status: number): void };
}

/** No prototype: a parameter may be called "constructor". */
function parameters(req: Request): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  Object.assign(out, req.query);
  const body: unknown = req.body;
  if (body !== null && typeof body === "object" && !Array.isArray(body) && !Buffer.isBuffer(body)) Object.assign(out, body);
  return out;
}

/**
 * `/provision/v1/<call>` (service-contract.md section 8): what panel modules and Upmind's
 * Generic software-licence provider call. Parameters come as a form or JSON body (POST), or in
 * the query string (GET); each call takes either method, as panels let the operator pick one.
 * Answers are always `{"success": ...}` JSON, errors with a stable `code`.
 */
export function provisioningRouter(deps: ProvisioningRouteDeps): Router {
  const router = express.Router();
  const fail = (res: express.Response, status: number, code: ErrorCode, error: string) => sendError(res, status, code, error);

  // Every answer of this API, errors from the app's handlers included, carries `success`.
  router.use("/provision", (_req, res, next) => {
    res.locals.successFlag = true;
    next();
  });
  router.use("/provision", requireBearer(deps.token, "provisioning"));
  const handle: express.RequestHandler[] = [
    (req, res, next) => {
      const type = req.is(["application/x-www-form-urlencoded", "application/json", "application/*+json"]);
      if (hasBody(req) && !type) return fail(res, 415, "unsupported_media_type", "send parameters as application/x-www-form-urlencoded or application/json");
      next();
    },
    express.urlencoded({ extended: false, limit: MAX_PARAMETERS_BYTES, parameterLimit: 100 }),
    express.json({ limit: MAX_PARAMETERS_BYTES, type: ["application/json", "application/*+json"] }),
  ];
  // Once per process and module version: an outdated module says so without flooding the log.
  const warned = new Set<string>();
  const noteCaller = async (call: string, userAgent: string | undefined, params: Record<string, unknown>, body: Record<string, unknown>, status: number) => {
    const client = moduleClientOf(userAgent);
    const label = client ? moduleLabel(client) : "other";
    deps.observer?.called?.(call, label, status);
    if (!client) return;
    if (isOutdated(client.version) && !warned.has(label)) {
      warned.add(label);
      deps.logger.warn(
        { module: label, min_version: MIN_MODULE_VERSION },
        `panel module ${label} is older than this bridge supports (${MIN_MODULE_VERSION}): install the module shipped with this release`,
      );
    }
    // The service the call was about, as its answer names it.
    const named = typeof body.service_identifier === "string" ? body.service_identifier : typeof params.service_identifier === "string" ? params.service_identifier : undefined;
    const key = typeof body.license_key === "string" ? body.license_key : undefined;
    const serviceId = named ?? (key ? (await deps.services.byLicenseKey(key))?.service_id : undefined);
    if (serviceId && status < 400) await deps.services.noteModule(serviceId, label);
  };

  for (const call of PROVISIONING_CALLS) {
    const run: express.RequestHandler = async (req, res) => {
      // A JSON list carries no named parameters: refused, rather than read as none given.
      if (Array.isArray(req.body)) return sendError(res, 422, "validation", "Validation error", { errors: { "(body)": [NOT_AN_OBJECT] } });
      const params = parameters(req);
      const answer = await deps.provisioning.call(call, params);
      if (answer.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(answer.retryAfterSeconds));
      res.status(answer.status).json(answer.body);
      // After the answer: recording who called must never delay or fail the call.
      await noteCaller(call, req.header("user-agent"), params, answer.body, answer.status).catch((err: unknown) =>
        deps.logger.warn({ err }, "could not record the calling module"),
      );
    };
    // GET with the query string, POST with a form or JSON body: whichever the panel's module or settings use.
    router.get(`/provision/v1/${call}`, ...handle, run);
    router.post(`/provision/v1/${call}`, ...handle, run);
  }
  router.use("/provision", (_req, res) => fail(res, 404, "not_found", "Not found"));
  return router;
}

/**
 * `/provision/*` while PROVISIONING_TOKEN is not set (live mode): 404, as the contract says, with
 * a code and words a module's connection test can show, so the operator is not sent hunting for
 * a wrong host name.
 */
export function provisioningOffRouter(): Router {
  const router = express.Router();
  router.use("/provision", (_req, res) => {
    res.locals.successFlag = true;
    sendError(res, 404, "provisioning_off", "the provisioning API is off on this bridge: set PROVISIONING_TOKEN there and give the panel module the same token");
  });
  return router;
}
