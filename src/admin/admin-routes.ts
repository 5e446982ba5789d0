import express, { type Router } from "express";
import { z } from "zod";
import { JOB_STATES } from "../vocabulary/jobs.js";
import type { BalanceReader } from "../reseller/balance.js";
import { type Store } from "../store/store.js";
import { SERVICE_STATUSES } from "../vocabulary/service-statuses.js";
import { fieldErrors } from "../intake/event-schema.js";
import { requireBearer } from "../http/auth.js";
import { sendError } from "../http/errors.js";
import { balanceView, historyView, jobView, licenseView, modulesView } from "./views.js";

export interface AdminRouteDeps {
  /** Every accepted admin token (ADMIN_TOKEN). */
  adminToken: string | readonly string[];
  store: Store;
  /** The reseller balance of the bridge's own account (src/reseller/balance.ts). */
  balance: BalanceReader;
}

/**
 * A filter sent empty is no filter: the contract itself writes them so (`?status=`,
 * `?state=&service_id=`), and a form or script that leaves one blank sends the key anyway. The
 * "" is part of each filter's schema, not stripped before parsing, so an unknown key stays
 * refused whatever its value and the OpenAPI document shows that "" is accepted.
 */
const noFilterIfEmpty = <T extends string>(schema: z.ZodType<T>) => schema.optional().transform((v) => (v === "" ? undefined : (v as Exclude<T, "">)));

export const licensesQuerySchema = z.strictObject({ status: noFilterIfEmpty(z.enum(["", ...SERVICE_STATUSES])) });
export const jobsQuerySchema = z.strictObject({
  state: noFilterIfEmpty(z.enum(["", ...JOB_STATES])),
  service_id: noFilterIfEmpty(z.string().max(64)),
  kind: noFilterIfEmpty(z.string().max(64)),
});
/** `fresh=true` asks the reseller now instead of answering the reading of the last minute. */
export const balanceQuerySchema = z.strictObject({
  fresh: noFilterIfEmpty(z.enum(["", "true", "false"])).describe("true: ask the reseller now rather than answer the reading of the last 60 s"),
});
/** What a job id looks like wherever one is typed (admin API, CLI). */
export const JOB_ID_RULE = "must be a job id in plain decimal digits (e.g. 42)";
/**
 * Plain decimal digits only: `Number()` (or `z.coerce`) would read `0x1` as job 1 and `1e3` as
 * job 1000, so an id written any other way would act on a job nobody named.
 */
export const jobIdSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, { error: JOB_ID_RULE })
  .transform(Number)
  .refine(Number.isSafeInteger, { error: JOB_ID_RULE });

/** The operator's API: read licences and jobs, retry a stuck job. */
export function adminRouter(deps: AdminRouteDeps): Router {
  const router = express.Router();
  router.use("/admin", requireBearer(deps.adminToken));

  const { services, jobs } = deps.store;
  router.get("/admin/services/:id", async (req, res) => {
    const svc = await services.get(req.params.id);
    if (!svc) return sendError(res, 404, "unknown_service", "unknown service");
    res.json({ ...licenseView(svc), history: (await services.history(svc.service_id)).map(historyView) });
  });

  router.get("/admin/licenses", async (req, res) => {
    const q = licensesQuerySchema.safeParse(req.query);
    if (!q.success) return sendError(res, 422, "validation", "Validation error", { errors: fieldErrors(q.error) });
    res.json({ licenses: (await services.list(q.data.status)).map(licenseView) });
  });

  router.get("/admin/jobs", async (req, res) => {
    const q = jobsQuerySchema.safeParse(req.query);
    if (!q.success) return sendError(res, 422, "validation", "Validation error", { errors: fieldErrors(q.error) });
    res.json({ jobs: (await jobs.list({ state: q.data.state, serviceId: q.data.service_id, kind: q.data.kind })).map(jobView) });
  });

  router.get("/admin/balance", async (req, res) => {
    const q = balanceQuerySchema.safeParse(req.query);
    if (!q.success) return sendError(res, 422, "validation", "Validation error", { errors: fieldErrors(q.error) });
    res.json(balanceView(await deps.balance.read({ fresh: q.data.fresh === "true" })));
  });

  router.get("/admin/modules", async (_req, res) => {
    res.json(modulesView(await services.modules()));
  });

  router.post("/admin/jobs/:id/retry", async (req, res) => {
    const id = jobIdSchema.safeParse(req.params.id);
    if (!id.success) return sendError(res, 422, "validation", "Validation error", { errors: { id: [JOB_ID_RULE] } });
    const job = await jobs.get(id.data);
    if (!job) return sendError(res, 404, "unknown_job", "unknown job");
    const retried = await jobs.retry(id.data);
    if (!retried) return sendError(res, 409, "conflict", `job ${id.data} is ${job.state}; only failed or blocked jobs can be retried`);
    res.status(202).json({ job: jobView(retried) });
  });

  return router;
}
