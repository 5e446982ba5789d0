import { randomUUID } from "node:crypto";
import express, { type Request, type Response, type Router } from "express";
import { z } from "zod";
import { jobIdSchema, SEARCH_MAX, SERVICE_HISTORY_LIMIT } from "../admin/admin-routes.js";
import { cursorSchema } from "../admin/paging.js";
import type { ActionOutcome, AdminActions } from "../admin/actions.js";
import { resendMailBodySchema } from "../admin/direct-actions.js";
import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../clock.js";
import type { OperatorDirectory } from "../http/auth.js";
import { failureLimit, tooManyFailures, type FailureLimit } from "../http/failure-limit.js";
import { ServiceUnavailableError, type ErrorAnswer } from "../http/errors.js";
import type { Logger } from "../log/logger.js";
import type { BalanceReader } from "../reseller/balance.js";
import type { ServiceRow, Store } from "../store/store.js";
import { SERVICE_STATUSES } from "../vocabulary/service-statuses.js";
import { PROVIDER_NAMES } from "../vocabulary/provider-names.js";
import { atMost } from "../validation/length.js";
import { repeatedParameters } from "../validation/query.js";
import type { AdminFunctions } from "./admin-functions.js";
import { CONSOLE_CSS } from "./assets.js";
import { CSRF_FIELD, requireCsrf } from "./csrf.js";
import { html, type Html } from "./html.js";
import { refreshedInBackground } from "./refreshed-in-background.js";
import { securityHeaders } from "./security-headers.js";
import { consoleSessions, cookiesOf, LOGIN_COOKIE, sameSecret, sessionOf, type ConsoleSession } from "./session.js";
import { confirmCancel, confirmRetry, JOB_SECTIONS, jobsPage } from "./views/jobs.js";
import { errorPage, outcomePage, page, type Section } from "./views/layout.js";
import { confirmLicenceAction, licencePage, licencesPage } from "./views/licences.js";
import { loginPage } from "./views/login.js";
import { adoptionPage, auditPage, reconcilePage } from "./views/operations.js";
import { overviewPage } from "./views/overview.js";

const DAY_MS = 86_400_000;
/** The console's forms carry a token, an IP, a request id and the CSRF value: a few hundred bytes. */
const FORM_LIMIT = "16kb";
/**
 * The adoption page's pasted service list: some 30,000 panel rows as a form encodes them. A larger
 * book is adopted from its file (`license-bridge adopt <file>`, POST /admin/adopt: 64 MiB).
 */
const ADOPTION_FORM_LIMIT = "8mb";
/** How old the overview's chart may be before a view asks for a new one. */
const CHART_FRESH_MS = 60_000;
/** How long the overview waits for the reseller's balance before it shows the last reading. */
const BALANCE_WAIT_MS = 300;

export interface ConsoleDeps {
  store: Store;
  actions: AdminActions;
  /** Who a login token belongs to, and who a session's operator is now: ADMIN_TOKEN's admin and OPERATORS_FILE's operators. */
  operators: Pick<OperatorDirectory, "identify" | "named">;
  balance: BalanceReader;
  catalog: Catalog;
  /** The install commands of a licence, through the upstream (cached). */
  installCommands: (svc: ServiceRow) => Promise<{ type: string; command: string }[]>;
  /** The admin API's functions behind adoption, the audit trail, the forecast and the queue. */
  admin: AdminFunctions;
  clock: Clock;
  /**
   * Failed logins per address, counted with the admin API's failed tokens; given by the
   * composition so a reload (a new router) does not forget them. (Default: a limit of its own)
   */
  loginLimit?: FailureLimit;
  logger?: Logger;
}

const optional = (schema: z.ZodString) => schema.optional().default("");
const LIST_LIMIT_RULE = "must be a whole number from 1 to 200";
const licencesQuery = z.strictObject({
  q: optional(z.string().trim().max(SEARCH_MAX, atMost(SEARCH_MAX))),
  status: z.enum(["", ...SERVICE_STATUSES], { error: `must be one of ${SERVICE_STATUSES.join(", ")}` }).optional().default(""),
  provider: z.enum(["", ...PROVIDER_NAMES], { error: `must be one of ${PROVIDER_NAMES.join(", ")}` }).optional().default(""),
  // The admin API's licence listing's next_cursor: the console pages through the same listing.
  cursor: cursorSchema("licenses"),
  // Plain digits, as the admin API's limit: a coercion would answer "NaN" for `ten`.
  limit: z
    .string({ error: LIST_LIMIT_RULE })
    .regex(/^[1-9][0-9]{0,2}$/, { error: LIST_LIMIT_RULE })
    .transform(Number)
    .refine((n) => n <= 200, { error: LIST_LIMIT_RULE })
    .optional()
    .default(50),
});
/** A licence's page: its latest history entries, or older ones from the cursor a page before gave. */
const licenceQuery = z.strictObject({ history: cursorSchema("history") });
const auditQuery = z.strictObject({ actor: optional(z.string().max(64)), service_id: optional(z.string().max(64)), cursor: optional(z.string().max(200)) });
const LICENCE_ACTIONS = ["suspend", "unsuspend", "change-ip", "resend-install-mail", "reset-ip-changes"] as const;

const send = (res: Response, status: number, body: Html) => res.status(status).type("html").send(body.text);

/** An error answer (src/http/errors.ts's ErrorAnswer) as the console's page, in the session when there is one. */
const answerAsPage: ErrorAnswer = (res, status, _code, error) => {
  const retryAfter = Number(res.getHeader("retry-after"));
  send(res, status, errorPage({ session: res.locals.session as ConsoleSession | undefined, status, message: error, retryAfterSeconds: Number.isInteger(retryAfter) ? retryAfter : undefined }));
};

/** A parameter that is wrong, named, as the admin API names it. */
function invalid(res: Response, error: z.ZodError) {
  const issue = error.issues[0]!;
  const field = issue.path.join(".") || (issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "(query)");
  return send(res, 422, page({ title: "Invalid request", session: sessionOf(res), body: html`<h1>Invalid request</h1><p class="notice bad" role="alert">${field}: ${issue.message}</p>` }));
}

/** The operator console under /console: server-rendered pages over the admin API's actions. */
export function consoleRouter(deps: ConsoleDeps): Router {
  const { store, actions, clock } = deps;
  const router = express.Router();
  const sessions = consoleSessions(store.sessions, clock, deps.operators, (err) => store.isBusy(err) || err instanceof ServiceUnavailableError);
  const limit = deps.loginLimit ?? failureLimit({ clock });
  // The 30-day chart counts a month of orders, renewals and failures: at a large book that is the
  // overview's slowest read, and a minute-old chart says the same, so no view waits for it.
  const dailyActivity = refreshedInBackground(() => store.consoleReads.daily(clock.now() - 30 * DAY_MS), CHART_FRESH_MS, clock);
  const form = express.urlencoded({ extended: false, limit: FORM_LIMIT, parameterLimit: 20 });
  // A handler's rejection goes to the app's error handler, whatever the handler returns.
  const h = (fn: (req: Request, res: Response) => Promise<unknown>) => (req: Request, res: Response, next: express.NextFunction) => void fn(req, res).catch(next);

  router.use("/console", securityHeaders);
  // Every error answer to a console request is a page, whatever raised it (the store busy or its
  // file lost: 503; a form too large: 413; a path that is no page: 404), with its status kept.
  router.use("/console", (_req, res, next) => {
    res.locals.errorAnswer = answerAsPage;
    next();
  });
  router.get("/console/assets/console.css", (_req, res) => {
    // The stylesheet is the same for everyone and holds nothing private: a day in the cache.
    res.setHeader("Cache-Control", "public, max-age=86400");
    res.type("text/css").send(CONSOLE_CSS);
  });

  router.get("/console/login", (req, res) => send(res, 200, loginPage({ csrf: sessions.loginToken(req, res) })));
  router.post(
    "/console/login",
    form,
    h(async (req, res) => {
      const client = req.ip;
      const wait = limit.refused(client);
      if (wait !== undefined) {
        res.setHeader("Retry-After", String(wait));
        return send(res, 429, loginPage({ csrf: sessions.loginToken(req, res), error: tooManyFailures(wait) }));
      }
      const body = (req.body ?? {}) as Record<string, unknown>;
      const expected = cookiesOf(req)[LOGIN_COOKIE];
      if (!expected || typeof body[CSRF_FIELD] !== "string" || !sameSecret(body[CSRF_FIELD], expected)) {
        return send(res, 403, loginPage({ csrf: sessions.loginToken(req, res), error: "The login form expired: try again." }));
      }
      const actor = typeof body.token === "string" && body.token !== "" ? deps.operators.identify(body.token) : undefined;
      if (!actor) {
        limit.failed(client);
        deps.logger?.warn({ client }, "console: a login with an unknown token");
        return send(res, 401, loginPage({ csrf: sessions.loginToken(req, res), error: "That token is not an operator's." }));
      }
      // A success clears no failure: a viewer's token must not buy a guesser fresh guesses.
      await sessions.open(req, res, actor);
      deps.logger?.info({ operator: actor.name }, "console: login");
      res.redirect(303, "/console");
    }),
  );

  // Everything below needs a live session; every POST its CSRF value.
  router.use("/console", sessions.require);
  // The adoption form's own limit; the parser below then finds its body read and passes it on.
  router.post("/console/adoption", express.urlencoded({ extended: false, limit: ADOPTION_FORM_LIMIT, parameterLimit: 20 }));
  // A query parameter given twice names no one page: said so, as the admin API says it.
  router.use("/console", (req, res, next) => {
    const repeated = repeatedParameters(req.query as Record<string, unknown>);
    if (!repeated) return next();
    const [field, messages] = Object.entries(repeated)[0]!;
    send(res, 422, page({ title: "Invalid request", session: sessionOf(res), body: html`<h1>Invalid request</h1><p class="notice bad" role="alert">${field}: ${messages.join("; ")}</p>` }));
  });
  router.post("/console/*splat", form, requireCsrf);
  router.post(
    "/console/logout",
    h(async (req, res) => {
      await sessions.close(req, res);
      res.redirect(303, "/console/login");
    }),
  );

  /** An action's outcome as a page: 200 with the result, or the refusal with the admin API's status. */
  const outcome = <T>(res: Response, r: ActionOutcome<T>, o: { section: Section; title: string; back: string; ok: (v: T) => string }) =>
    send(
      res,
      r.ok ? 200 : r.status,
      outcomePage({
        session: sessionOf(res),
        section: o.section,
        title: o.title,
        back: o.back,
        ok: r.ok,
        message: r.ok ? o.ok(r.value) : r.errors ? Object.entries(r.errors).map(([f, m]) => `${f}: ${m.join("; ")}`).join(". ") : r.message,
      }),
    );

  router.get(
    "/console",
    h(async (_req, res) => {
      const now = clock.now();
      const [statuses, blocked, failed, alerts, balance, daily, forecast, queue] = await Promise.all([
        store.consoleReads.statusCounts(),
        store.jobs.list({ state: "blocked", limit: 25 }),
        store.jobs.list({ state: "failed", limit: 25 }),
        store.alerts.open(),
        deps.balance.read({ waitMs: BALANCE_WAIT_MS }),
        dailyActivity().then((c) => c.value),
        deps.admin.forecast(7),
        deps.admin.queueLag(),
      ]);
      send(res, 200, overviewPage(sessionOf(res), { statuses, stopped: [...blocked, ...failed], alerts, balance, daily, today: Math.floor(now / DAY_MS), forecast, queue }));
    }),
  );

  router.get(
    "/console/licences",
    h(async (req, res) => {
      const q = licencesQuery.safeParse(req.query);
      if (!q.success) return invalid(res, q.error);
      const { limit, cursor, status, provider } = q.data;
      const found = await store.services.page({ q: q.data.q || undefined, status: status || undefined, provider: provider || undefined, cursor, limit });
      const next = found.nextCursor ? new URLSearchParams({ q: q.data.q, status, provider, cursor: found.nextCursor, limit: String(limit) }).toString() : undefined;
      send(res, 200, licencesPage(sessionOf(res), { q: q.data.q, status, provider, rows: found.items, total: found.total, next }));
    }),
  );

  const notFound = (res: Response, what: string) =>
    send(res, 404, page({ title: "Not found", session: sessionOf(res), body: html`<h1>Not found</h1><p>${what}</p><p><a href="/console/licences">Licences</a></p>` }));

  router.get(
    "/console/licences/:id",
    h(async (req, res) => {
      const q = licenceQuery.safeParse(req.query);
      if (!q.success) return invalid(res, q.error);
      const service = await store.services.get(String(req.params.id));
      if (!service) return notFound(res, "The bridge does not know this service.");
      // A page of history, newest first, as GET /admin/services/:id answers it: a licence renewed for years has thousands.
      const [history, jobs, mails] = await Promise.all([
        store.services.historyPage(service.service_id, { limit: SERVICE_HISTORY_LIMIT, cursor: q.data.history }),
        store.jobs.list({ serviceId: service.service_id, limit: 50 }),
        store.consoleReads.mailsOf(service.service_id, 20),
      ]);
      let installCommands: { type: string; command: string }[] | string = "shown once the licence is active";
      if (service.status === "active") {
        installCommands = await deps.installCommands(service).catch((err: unknown) => `could not be read from the reseller now: ${(err as Error).message}`);
      }
      const max = deps.catalog.product(service.product_id)?.maxIpChanges ?? null;
      send(res, 200, licencePage(sessionOf(res), { service, history, olderHistory: q.data.history !== undefined, jobs, mails, installCommands, ipChangesLeft: max === null ? null : Math.max(0, max - service.ip_changes) }));
    }),
  );

  router.get(
    "/console/licences/:id/confirm/:action",
    h(async (req, res) => {
      const action = String(req.params.action);
      if (!(LICENCE_ACTIONS as readonly string[]).includes(action)) return notFound(res, "No such action.");
      const service = await store.services.get(String(req.params.id));
      if (!service) return notFound(res, "The bridge does not know this service.");
      // A resend's form carries its own id: posted twice (a double-click), it queues one mail.
      send(res, 200, confirmLicenceAction(sessionOf(res), service, action, action === "resend-install-mail" ? { requestId: randomUUID() } : {}));
    }),
  );

  router.post(
    "/console/licences/:id/:action",
    h(async (req, res) => {
      const serviceId = String(req.params.id);
      const action = String(req.params.action);
      const actor = sessionOf(res).actor;
      const back = `/console/licences/${encodeURIComponent(serviceId)}`;
      const body = req.body as Record<string, unknown>;
      const done = (v: { job_id: number | null; nothing_to_do: string | null }) =>
        v.nothing_to_do ? `Nothing to do: ${v.nothing_to_do}.` : `Accepted: job ${v.job_id} carries it out; the licence page shows its outcome.`;
      if (action === "suspend" || action === "unsuspend") return outcome(res, await actions[action](actor, { serviceId }), { section: "licences", title: `${action[0]!.toUpperCase()}${action.slice(1)} ${serviceId}`, back, ok: done });
      if (action === "change-ip") {
        const ip = typeof body.ip === "string" ? body.ip.trim() : "";
        return outcome(res, await actions.changeIp(actor, { serviceId, ip }), { section: "licences", title: `Change the IP of ${serviceId}`, back, ok: done });
      }
      if (action === "resend-install-mail") {
        const request = resendMailBodySchema.safeParse({ request_id: typeof body.request_id === "string" && body.request_id !== "" ? body.request_id : undefined });
        if (!request.success) return invalid(res, request.error);
        return outcome(res, await actions.resendInstallMail(actor, { serviceId, requestId: request.data.request_id }), {
          section: "licences",
          title: `Resend the install mail of ${serviceId}`,
          back,
          ok: (m) => (m.created ? `Queued: job ${m.jobId} sends the install mail to ${m.to}.` : `Already queued by this form: job ${m.jobId} sends the install mail to ${m.to}.`),
        });
      }
      if (action === "reset-ip-changes") {
        return outcome(res, await actions.resetIpChanges(actor, { serviceId }), {
          section: "licences",
          title: `Reset the IP changes of ${serviceId}`,
          back,
          ok: (svc) => `The IP-change counter of ${svc.service_id} is 0 again.`,
        });
      }
      notFound(res, "No such action.");
    }),
  );

  router.get(
    "/console/jobs",
    h(async (_req, res) => {
      const lists = await Promise.all(JOB_SECTIONS.map((state) => store.jobs.list({ state, limit: 100 })));
      send(res, 200, jobsPage(sessionOf(res), Object.fromEntries(JOB_SECTIONS.map((s, i) => [s, lists[i]!])) as Parameters<typeof jobsPage>[1]));
    }),
  );

  const jobOf = async (req: Request, res: Response) => {
    const id = jobIdSchema.safeParse(req.params.id);
    const job = id.success ? await store.jobs.get(id.data) : undefined;
    if (!job) notFound(res, "The bridge has no such job.");
    return job;
  };
  router.get(
    "/console/jobs/:id/confirm/retry",
    h(async (req, res) => {
      const job = await jobOf(req, res);
      if (job) send(res, 200, confirmRetry(sessionOf(res), job));
    }),
  );
  router.post(
    "/console/jobs/:id/retry",
    h(async (req, res) => {
      const job = await jobOf(req, res);
      if (!job) return;
      outcome(res, await actions.retryJob(sessionOf(res).actor, { id: job.id }), {
        section: "jobs",
        title: `Retry job ${job.id}`,
        back: job.serviceId ? `/console/licences/${encodeURIComponent(job.serviceId)}` : "/console/jobs",
        ok: (j) => `Job ${j.id} is ${j.state} again, with fresh attempts.`,
      });
    }),
  );

  router.get(
    "/console/jobs/:id/confirm/cancel",
    h(async (req, res) => {
      const job = await jobOf(req, res);
      if (job) send(res, 200, confirmCancel(sessionOf(res), job));
    }),
  );
  router.post(
    "/console/jobs/:id/cancel",
    h(async (req, res) => {
      const job = await jobOf(req, res);
      if (!job) return;
      outcome(res, await actions.cancelJob(sessionOf(res).actor, { id: job.id }), {
        section: "jobs",
        title: `Cancel job ${job.id}`,
        back: job.serviceId ? `/console/licences/${encodeURIComponent(job.serviceId)}` : "/console/jobs",
        ok: (j) => `Job ${j.id} (${j.kind}) is cancelled: it will not run again.`,
      });
    }),
  );

  router.get("/console/reconcile", (_req, res) => send(res, 200, reconcilePage(sessionOf(res))));
  router.post(
    "/console/reconcile",
    h(async (req, res) => {
      const fix = (req.body as Record<string, unknown>).fix === "true";
      const r = await actions.reconcile(sessionOf(res).actor, { fix });
      if (!r.ok) return outcome(res, r, { section: "reconcile", title: "Reconcile", back: "/console/reconcile", ok: () => "" });
      send(res, 200, reconcilePage(sessionOf(res), r.value, fix));
    }),
  );

  router.get("/console/adoption", (_req, res) => send(res, 200, adoptionPage(sessionOf(res))));
  router.post(
    "/console/adoption",
    h(async (req, res) => {
      const session = sessionOf(res);
      const body = req.body as Record<string, unknown>;
      const text = typeof body.services === "string" ? body.services : "";
      let services: unknown;
      try {
        services = JSON.parse(text);
      } catch {
        return send(res, 422, adoptionPage(session, { text, error: "services: is not JSON" }));
      }
      const list = Array.isArray(services) ? services : (services as { services?: unknown[] })?.services;
      if (!Array.isArray(list)) return send(res, 422, adoptionPage(session, { text, error: "services: must be a list of services" }));
      const apply = body.apply === "true";
      const r = await deps.admin.adopt(session.actor, { services: list, apply });
      if (!r.ok) return send(res, r.status, adoptionPage(session, { text, error: r.message }));
      send(res, 200, adoptionPage(session, { text, plan: r.value, applied: apply }));
    }),
  );

  router.get(
    "/console/audit",
    h(async (req, res) => {
      const q = auditQuery.safeParse(req.query);
      if (!q.success) return invalid(res, q.error);
      const entries = await deps.admin.audit({ actor: q.data.actor || undefined, service_id: q.data.service_id || undefined, cursor: q.data.cursor || undefined, limit: 100 });
      send(res, 200, auditPage(sessionOf(res), { actor: q.data.actor, service_id: q.data.service_id, entries }));
    }),
  );

  return router;
}
