import type { RequestHandler } from "express";
import { authenticate, operatorOf, type OperatorDirectory } from "../http/auth.js";
import { sendError } from "../http/errors.js";
import type { FailureLimit } from "../http/failure-limit.js";
import type { AuditOps, ServiceOps } from "../store/store.js";
import { AUDIT_ACTIONS } from "../vocabulary/audit.js";
import { ROLE_MEANING, roleAllows, type Role } from "../vocabulary/roles.js";
import { withArticle } from "../vocabulary/text.js";
import type { FieldErrors } from "../validation/field-errors.js";
import { JOB_ID_RULE, jobIdSchema, serviceIdProblem } from "./ids.js";

/**
 * Who may call which admin route: the one table the guard, the OpenAPI document and the tests
 * read. `path` is Express's pattern (`:id` one segment, a trailing `*` the rest). A route not
 * listed falls to the defaults below: a GET is a read (viewer), anything else needs an admin,
 * so a new mutating route is closed until someone decides otherwise here.
 */
export interface RoutePermission {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "*";
  path: string;
  role: Role;
  /** The role a request with `{"fix": true}` needs (reconcile: looking is an operator's, repairing an admin's). */
  fixRole?: Role;
  /** The audit action of a mutating route: a request its role refuses is recorded under it as `refused`. */
  action?: string;
}

export const ADMIN_PERMISSIONS: readonly RoutePermission[] = [
  // Reads: everyone with a token.
  { method: "GET", path: "/admin/*", role: "viewer" },
  // Licences and jobs: operators.
  { method: "POST", path: "/admin/jobs/:id/retry", role: "operator", action: AUDIT_ACTIONS.jobRetry },
  { method: "POST", path: "/admin/jobs/:id/cancel", role: "operator", action: AUDIT_ACTIONS.jobCancel },
  { method: "POST", path: "/admin/services/:id/resend-install-mail", role: "operator", action: AUDIT_ACTIONS.serviceResendInstallMail },
  { method: "POST", path: "/admin/services/:id/reset-ip-changes", role: "operator", action: AUDIT_ACTIONS.serviceResetIpChanges },
  { method: "POST", path: "/admin/services/:id/*", role: "operator", action: "service.action" },
  { method: "POST", path: "/admin/renewals/due", role: "operator", action: AUDIT_ACTIONS.renewDue },
  // A comparison buys and changes nothing; its repairs change licences and are an admin's.
  { method: "POST", path: "/admin/reconcile", role: "operator", fixRole: "admin", action: AUDIT_ACTIONS.reconcileFix },
  // Adoption and the reseller's money and accounts: admins.
  { method: "POST", path: "/admin/adopt", role: "admin", action: AUDIT_ACTIONS.adoptApply },
  { method: "*", path: "/admin/reseller/*", role: "admin", action: "reseller" },
  { method: "*", path: "/admin/sub-resellers/*", role: "admin", action: "sub_reseller" },
];

/** A route's row: the first whose method and path match, else the defaults (GET viewer, else admin). */
export function permissionOf(method: string, path: string): RoutePermission {
  const m = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
  const found = ADMIN_PERMISSIONS.find((p) => (p.method === "*" || p.method === m) && pathMatches(p.path, path));
  return found ?? { method: m as RoutePermission["method"], path, role: m === "GET" ? "viewer" : "admin" };
}

/** The role a request needs: the route's, or its `fixRole` when the body asks for a repair. */
export function requiredRole(method: string, path: string, body?: { fix?: unknown }): Role {
  const p = permissionOf(method, path);
  return body?.fix === true && p.fixRole ? p.fixRole : p.role;
}

function pathMatches(pattern: string, path: string): boolean {
  const want = pattern.split("/").filter(Boolean);
  const have = path.split("?")[0]!.split("/").filter(Boolean);
  for (let i = 0; i < want.length; i++) {
    if (want[i] === "*") return have.length > i;
    if (have[i] === undefined) return false;
    if (!want[i]!.startsWith(":") && want[i] !== have[i]) return false;
  }
  return want.length === have.length;
}

export interface AdminAccessDeps {
  operators: OperatorDirectory;
  /** Failed tokens per client, shared with the console's logins (429 over the limit). (Default: no limit) */
  failures?: FailureLimit;
  /** Where a refused action is recorded. */
  audit: Pick<AuditOps, "record">;
  /** Whether a refused action's service exists: only a known service's id is written into its entry. */
  services: Pick<ServiceOps, "get">;
}

/**
 * Refuses (403 `forbidden`) an operator whose role is below `need`, recording the refusal when
 * the route is a mutating one; returns whether the request may go on. `serviceId`, `jobId`: what
 * the refused action was about, for the entry.
 */
export async function allowOrRefuse(
  deps: AdminAccessDeps,
  res: Parameters<RequestHandler>[1],
  need: Role,
  what: { method: string; path: string; action?: string; serviceId?: string | null; jobId?: number | null },
): Promise<boolean> {
  const actor = operatorOf(res);
  if (!actor) {
    sendError(res, 401, "unauthorized", "Unauthorized: send Authorization: Bearer <ADMIN_TOKEN or an operator's token (OPERATORS_FILE)>");
    return false;
  }
  if (roleAllows(actor.role, need)) return true;
  if (what.action) {
    // An id no service has says nothing about a service, and may be anything a client put in the
    // path (a token pasted in the wrong place): only the id of a service the bridge knows is kept.
    const known = what.serviceId ? (await deps.services.get(what.serviceId)) !== undefined : false;
    await deps.audit.record({
      actor: actor.name,
      action: what.action,
      service_id: known ? what.serviceId! : null,
      job_id: what.jobId ?? null,
      outcome: "refused",
      detail: `forbidden: ${what.method} ${what.path} needs the ${need} role; ${actor.name} is ${withArticle(actor.role)}`,
    });
  }
  sendError(
    res,
    403,
    "forbidden",
    `Forbidden: ${what.method} ${what.path} needs the ${need} role (${ROLE_MEANING[need]}); ${actor.name} is ${withArticle(actor.role)}`,
    { required_role: need, role: actor.role },
  );
  return false;
}

/** `/admin/jobs/42/retry` → jobs, "42"; `/admin/services/4711/…` → services, "4711": what a call is about. */
function pathSubject(path: string): { kind?: string; id?: string } {
  const [, , kind, id] = path.split("?")[0]!.split("/");
  return { kind, id: id === undefined ? undefined : kind === "services" ? decodeURIComponent(id) : id };
}

/** What a refused call was about, for its entry (a job id only when it is one). */
function subjectOf(path: string): { serviceId?: string; jobId?: number } {
  const { kind, id } = pathSubject(path);
  if (kind === "services" && id) return { serviceId: id };
  const job = kind === "jobs" ? jobIdSchema.safeParse(id) : undefined;
  return job?.success ? { jobId: job.data } : {};
}

/**
 * What is wrong with the id in the path of a route that acts: a service or job id that no service
 * or job can have (a service id by the intake's rule, at most 64 characters; a job id in plain
 * digits). A read of such an id answers 404, as for any id the bridge does not know: it stores nothing.
 */
function badSubject(method: string, path: string): FieldErrors | undefined {
  if (method === "GET" || method === "HEAD") return undefined;
  const { kind, id } = pathSubject(path);
  if (id === undefined) return undefined;
  if (kind === "services") return serviceIdProblem(id);
  if (kind === "jobs" && !jobIdSchema.safeParse(id).success) return { id: [JOB_ID_RULE] };
  return undefined;
}

/**
 * The admin API's door, mounted on `/admin` by every admin router: a valid token (401 otherwise;
 * 429 for a client with too many failed ones),
 * then, on a route that acts, an id in its path that a service or job can have (422 naming `id`
 * otherwise), then the role its route needs by the table above (403 otherwise, audited for a
 * mutating route). The id comes before the role, so that one no service or job can have is
 * refused alike for everyone and never written into a refusal's entry: the trail cannot be grown
 * with it. A route whose need depends on the body (reconcile's `fix`) checks that again once it
 * has read it.
 */
export function adminAccess(deps: AdminAccessDeps): RequestHandler[] {
  const authorize: RequestHandler = (req, res, next) => {
    const path = `${req.baseUrl}${req.path}`;
    const problem = badSubject(req.method.toUpperCase(), path);
    if (problem) return sendError(res, 422, "validation", "Validation error", { field: Object.keys(problem)[0], errors: problem });
    const p = permissionOf(req.method, path);
    allowOrRefuse(deps, res, p.role, { method: req.method, path: p.path, action: p.action, ...subjectOf(path) }).then(
      (ok) => (ok ? next() : undefined),
      next,
    );
  };
  return [authenticate(deps.operators, deps.failures), authorize];
}
