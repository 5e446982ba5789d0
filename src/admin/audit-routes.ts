import express, { type Router } from "express";
import { z } from "zod";
import type { AuditEntry, AuditOps } from "../store/store.js";
import { AUDIT_OUTCOMES } from "../vocabulary/audit.js";
import { noFilterIfEmpty } from "./admin-routes.js";
import { adminAccess, type AdminAccessDeps } from "./permissions.js";
import { idCursorSchema, limitSchema, queryOf } from "./paging.js";

export const auditQuerySchema = z.strictObject({
  actor: noFilterIfEmpty(z.string().max(200)).describe("only this operator's entries (`admin` is ADMIN_TOKEN; the CLI's are `cli:<user>`)"),
  service_id: noFilterIfEmpty(z.string().max(64)).describe("only entries about this service"),
  action: noFilterIfEmpty(z.string().max(64)).describe("only this action (e.g. job.retry)"),
  outcome: noFilterIfEmpty(z.enum(["", ...AUDIT_OUTCOMES])).describe("only this outcome"),
  limit: limitSchema,
  cursor: idCursorSchema,
});

/** An entry as the admin API and the CLI show it. */
export function auditView(e: AuditEntry) {
  return { id: e.id, at: new Date(e.at).toISOString(), actor: e.actor, action: e.action, service_id: e.service_id, job_id: e.job_id, outcome: e.outcome, detail: e.detail };
}

/** One page of the trail, newest first, and the cursor of the next (one more row read tells whether there is one). */
export async function auditPage(audit: Pick<AuditOps, "list">, q: z.output<typeof auditQuerySchema>) {
  const limit = q.limit;
  const { entries, total } = await audit.list({ actor: q.actor, serviceId: q.service_id, action: q.action, outcome: q.outcome, beforeId: q.cursor, limit: limit + 1 });
  const page = entries.slice(0, limit);
  return { audit: page.map(auditView), next_cursor: entries.length > limit ? String(page[page.length - 1]!.id) : null, total };
}

/** `GET /admin/audit`: who did what through the admin API, the CLI and the console. */
export function auditRouter(deps: AdminAccessDeps & { audit: AuditOps }): Router {
  const router = express.Router();
  router.use("/admin", ...adminAccess(deps));
  router.get("/admin/audit", async (req, res) => {
    const q = queryOf(req, res, auditQuerySchema);
    if (!q) return;
    res.json(await auditPage(deps.audit, q));
  });
  return router;
}
