import express, { type Response, type Router } from "express";
import { z } from "zod";
import { JOB_STATES } from "../vocabulary/jobs.js";
import type { BalanceReader } from "../reseller/balance.js";
import { PAGE_LIMIT, type Store } from "../store/store.js";
import { SERVICE_STATUSES } from "../vocabulary/service-statuses.js";
import { fieldErrors } from "../intake/event-schema.js";
import { operatorOf } from "../http/auth.js";
import { adminAccess, type AdminAccessDeps } from "./permissions.js";
import { sendError } from "../http/errors.js";
import { pageBody, pagingFields, queryOf } from "./paging.js";
import { balanceView, historyView, jobView, licenseView, modulesView, queuedMailView, queueView } from "./views.js";
import { changeIpBodySchema, type ActionOutcome, type AdminActions } from "./actions.js";
import { resendMailBodySchema } from "./direct-actions.js";
import { JOB_ID_RULE, jobIdSchema } from "./ids.js";
import type { Actor } from "../vocabulary/roles.js";
import { isJsonContentType } from "../webhooks/route.js";
import { hasBody } from "../http/request-body.js";
import { idFilterSchema, noFilterIfEmpty, providerFilterSchema, searchSchema } from "./filters.js";

export interface AdminRouteDeps extends AdminAccessDeps {
  store: Store;
  /** The changes an operator can make; the console calls the same functions. */
  actions: AdminActions;
  /** The reseller balance of the bridge's own account (src/reseller/balance.ts). */
  balance: BalanceReader;
}

export { noFilterIfEmpty, SEARCH_MAX, searchSchema } from "./filters.js";

export const licensesQuerySchema = z.strictObject({
  status: noFilterIfEmpty(z.enum(["", ...SERVICE_STATUSES])),
  provider: providerFilterSchema,
  q: searchSchema,
  ...pagingFields("licenses"),
});
export const jobsQuerySchema = z.strictObject({
  state: noFilterIfEmpty(z.enum(["", ...JOB_STATES])),
  service_id: idFilterSchema,
  kind: idFilterSchema,
  ...pagingFields("jobs"),
});
export const historyQuerySchema = z.strictObject(pagingFields("history"));
export const licensesExportQuerySchema = z.strictObject({ status: licensesQuerySchema.shape.status, provider: providerFilterSchema, q: searchSchema });

/** How many history entries GET /admin/services/:id shows; older ones page through /history. */
export const SERVICE_HISTORY_LIMIT = PAGE_LIMIT.default;
/** 422 naming the wrong fields: `errors` per field, and `field`, the first of them, for a caller that checks one. */
function refuse(res: Response, error: z.ZodError): void {
  const errors = fieldErrors(error);
  sendError(res, 422, "validation", "Validation error", { field: Object.keys(errors)[0], errors });
}
/** `fresh=true` asks the reseller now instead of answering the reading of the last minute. */
export const balanceQuerySchema = z.strictObject({
  fresh: noFilterIfEmpty(z.enum(["", "true", "false"])).describe("true: ask the reseller now rather than answer the reading of the last 60 s"),
});
export { JOB_ID_RULE, jobIdSchema } from "./ids.js";

/** Who a request acts as: the operator its token belongs to (ADMIN_TOKEN: the admin named "admin"), set by authenticate(). */
const actorOf = (res: Response): Actor => {
  const actor = operatorOf(res);
  if (!actor) throw new Error("actorOf: the request was not authenticated (authenticate() must run first)");
  return actor;
};

/** Answers an action's outcome: `ok(value)` on success, the refusal as the admin API words it. */
export function sendOutcome<T>(res: Response, outcome: ActionOutcome<T>, ok: (value: T) => void): void {
  if (outcome.ok) return ok(outcome.value);
  sendError(res, outcome.status, outcome.code, outcome.message, outcome.errors ? { errors: outcome.errors } : {});
}

/** The licence actions' bodies are JSON (or none): another type would be silently ignored. */
const jsonBody: express.RequestHandler[] = [
  (req, res, next) => {
    if (hasBody(req) && !isJsonContentType(req)) return sendError(res, 415, "unsupported_media_type", "Content-Type must be application/json");
    next();
  },
  express.json({ limit: "64kb", type: () => true }),
];

/** The operator's API: read licences and jobs, retry or cancel a stuck job, act on a licence. */
export function adminRouter(deps: AdminRouteDeps): Router {
  const router = express.Router();
  // Who is calling, and whether their role allows the route (permissions.ts, one table).
  router.use("/admin", ...adminAccess(deps));

  const { services, jobs } = deps.store;
  router.get("/admin/services/:id", async (req, res) => {
    const svc = await services.get(req.params.id);
    if (!svc) return sendError(res, 404, "unknown_service", "unknown service");
    // The latest entries, in the order they happened; the rest page through /history from history_next_cursor.
    const latest = await services.historyPage(svc.service_id, { limit: SERVICE_HISTORY_LIMIT });
    res.json({
      ...licenseView(svc),
      history: latest.items.map(historyView).reverse(),
      history_total: latest.total,
      history_next_cursor: latest.nextCursor,
    });
  });

  router.get("/admin/services/:id/history", async (req, res) => {
    const q = queryOf(req, res, historyQuerySchema);
    if (!q) return;
    const svc = await services.get(req.params.id);
    if (!svc) return sendError(res, 404, "unknown_service", "unknown service");
    const page = await services.historyPage(svc.service_id, { limit: q.limit, cursor: q.cursor });
    res.json({ service_id: svc.service_id, ...pageBody("history", page, historyView) });
  });

  router.get("/admin/licenses", async (req, res) => {
    const q = queryOf(req, res, licensesQuerySchema);
    if (!q) return;
    const page = await services.page({ status: q.status, provider: q.provider, q: q.q, limit: q.limit, cursor: q.cursor });
    res.json(pageBody("licenses", page, licenseView));
  });

  // Every licence, one JSON object a line, in chunks of a page that the store reads (on SQLite in a
  // worker thread) as they are written, and written as the client takes them (a slow reader holds
  // a page or two, not the table); a client that goes away ends the reading, or, while the export
  // still waits for one of SQLite's few export workers, gives up its turn.
  /**
   * Until the client has taken what was written, or has gone. Both listeners go when either
   * fires: an export waits here once per socket buffer (thousands of times for 100,000
   * licences), and racing two `once()` left the loser's listeners on the response each time.
   */
  const drainedOrGone = (res: Response) =>
    new Promise<void>((resolve) => {
      const done = () => {
        res.off("drain", done);
        res.off("close", done);
        resolve();
      };
      res.on("drain", done);
      res.on("close", done);
    });

  router.get("/admin/licenses/export", async (req, res) => {
    const q = queryOf(req, res, licensesExportQuerySchema);
    if (!q) return;
    res.type("application/x-ndjson");
    const left = new AbortController();
    res.on("close", () => left.abort());
    try {
      for await (const chunk of services.exportChunks({ status: q.status, provider: q.provider, q: q.q }, { signal: left.signal })) {
        if (left.signal.aborted) return;
        if (!res.write(chunk)) await drainedOrGone(res);
      }
    } catch (err) {
      // It gave up its turn for a worker: nobody is left to answer.
      if (left.signal.aborted && err === left.signal.reason) return;
      throw err;
    }
    res.end();
  });

  router.get("/admin/jobs", async (req, res) => {
    const q = queryOf(req, res, jobsQuerySchema);
    if (!q) return;
    const page = await jobs.page({ state: q.state, serviceId: q.service_id, kind: q.kind, limit: q.limit, cursor: q.cursor });
    res.json(pageBody("jobs", page, jobView));
  });

  router.get("/admin/queue", async (_req, res) => {
    res.json(queueView(await jobs.queue()));
  });

  router.get("/admin/balance", async (req, res) => {
    const q = queryOf(req, res, balanceQuerySchema);
    if (!q) return;
    res.json(balanceView(await deps.balance.read({ fresh: q.fresh === "true" })));
  });

  router.get("/admin/modules", async (_req, res) => {
    res.json(modulesView(await services.modules()));
  });

  router.post("/admin/jobs/:id/retry", async (req, res) => {
    const id = jobIdSchema.safeParse(req.params.id);
    if (!id.success) return sendError(res, 422, "validation", "Validation error", { field: "id", errors: { id: [JOB_ID_RULE] } });
    // The retry and its audit entry (ok, or refused when the job is not failed or blocked) commit together.
    sendOutcome(res, await deps.actions.retryJob(actorOf(res), { id: id.data }), (job) => res.status(202).json({ job: jobView(job) }));
  });

  router.post("/admin/jobs/:id/cancel", async (req, res) => {
    const id = jobIdSchema.safeParse(req.params.id);
    if (!id.success) return sendError(res, 422, "validation", "Validation error", { field: "id", errors: { id: [JOB_ID_RULE] } });
    // The cancel and its audit entry (ok, or refused saying why) commit together; it is done when answered.
    sendOutcome(res, await deps.actions.cancelJob(actorOf(res), { id: id.data }), (job) => res.json({ job: jobView(job) }));
  });

  // An operator's change to a licence: an event like a panel's, through the deciding core (202: its job runs after).
  const licenceAction = (name: "suspend" | "unsuspend") =>
    router.post(`/admin/services/:id/${name}`, ...jsonBody, async (req, res) => {
      sendOutcome(res, await deps.actions[name](actorOf(res), { serviceId: String(req.params.id) }), (r) => res.status(202).json(r));
    });
  licenceAction("suspend");
  licenceAction("unsuspend");
  router.post("/admin/services/:id/change-ip", ...jsonBody, async (req, res) => {
    const body = changeIpBodySchema.safeParse(req.body ?? {});
    if (!body.success) return sendError(res, 422, "validation", "Validation error", { errors: fieldErrors(body.error) });
    sendOutcome(res, await deps.actions.changeIp(actorOf(res), { serviceId: String(req.params.id), ip: body.data.ip }), (r) => res.status(202).json(r));
  });
  // A fresh install mail (202: its job sends it after the answer).
  router.post("/admin/services/:id/resend-install-mail", ...jsonBody, async (req, res) => {
    const body = resendMailBodySchema.safeParse(req.body ?? {});
    if (!body.success) return refuse(res, body.error);
    const outcome = await deps.actions.resendInstallMail(actorOf(res), { serviceId: String(req.params.id), requestId: body.data.request_id });
    sendOutcome(res, outcome, (r) => res.status(202).json(queuedMailView(r)));
  });
  // The reset is the whole change: done when answered.
  router.post("/admin/services/:id/reset-ip-changes", ...jsonBody, async (req, res) => {
    sendOutcome(res, await deps.actions.resetIpChanges(actorOf(res), { serviceId: String(req.params.id) }), (svc) => res.json(licenseView(svc)));
  });

  return router;
}
