import { writeFileSync, rmSync } from "node:fs";
import type { Express } from "express";
import { resolve } from "node:path";
import type { Config } from "./config/load.js";
import { adminRouter } from "./http/admin-routes.js";
import { createApp } from "./http/app.js";
import { hostPort, listen } from "./http/listen.js";
import { healthRouter } from "./http/health-routes.js";
import { openApiRouter } from "./http/openapi.js";
import { reconcileRouter } from "./http/reconcile-routes.js";
import { systemClock, type Clock } from "./jobs/clock.js";
import { JobQueue } from "./jobs/queue.js";
import { JobRunner, type JobHandler, type RunnerObserver } from "./jobs/runner.js";
import type { LifecycleDeps } from "./lifecycle/deps.js";
import { lifecycleHandlers, recordStoppedJobs } from "./lifecycle/handlers.js";
import { createUpstream, type Upstream } from "./lifecycle/upstream.js";
import type { Logger } from "./log/logger.js";
import { createMetrics, type Metrics } from "./observability/metrics.js";
import { createConnectionPool } from "./reseller/connection-pool.js";
import type { UpstreamObserver } from "./reseller/transport.js";
import { createV1Client, type V1Client } from "./reseller/v1.js";
import { createV2Client, type V2Client } from "./reseller/v2.js";
import { createSandbox, DEFAULT_SANDBOX_TOKENS, type RunningSandbox } from "./sandbox/app.js";
import { alertMailHandler, ALERT_JOB_KIND, createAlerts, type Alerts } from "./alerts/alerts.js";
import { alertForStoppedJob, resolveOnSuccess } from "./alerts/job-alerts.js";
import { createMailer, mailHandlers, type Mailer } from "./mail/index.js";
import { checkRenewalsAtRisk, healBlockedRenewals } from "./renewals/healing.js";
import { scheduleRenewals } from "./renewals/schedule.js";
import { createSweep, type Sweep } from "./renewals/sweep.js";
import { openDatabase, type Db } from "./store/database.js";
import { watchDatabaseFile } from "./store/database-file.js";
import { migrate } from "./store/migrations.js";
import { ServiceStore } from "./store/services.js";
import { billingSource } from "./webhooks/billing-source.js";
import { webhookRouter } from "./webhooks/route.js";
import { adapterRouters } from "./webhooks/adapters/index.js";
import { createGroupCommit } from "./store/group-commit.js";
import { groupCommit } from "./webhooks/group-commit.js";
import { guardAccept } from "./webhooks/availability.js";
import { createIntake } from "./webhooks/intake.js";
import { JobWaiter } from "./provisioning/job-waiter.js";
import { createProvisioning } from "./provisioning/provisioning.js";
import { provisioningRouter } from "./provisioning/routes.js";
import { secretKey } from "./webhooks/signature.js";

export interface ResellerClients {
  v1: V1Client;
  v2: V2Client | null;
  /** The in-process sandbox in sandbox mode. */
  sandbox: RunningSandbox | null;
  close(): Promise<void>;
}

/**
 * Counts every reseller call in `metrics` and logs it as one info line: operation, method,
 * status, outcome, duration; never a body or URL. Pass it as the clients' `observer` (tests that
 * build their own clients do so too, with the `metrics` they give `startService`).
 */
export function observeUpstream(logger: Logger, metrics?: Metrics): UpstreamObserver {
  return {
    callFinished(r) {
      metrics?.upstream.callFinished(r);
      logger.info(
        { operation: r.operation, method: r.method, status: r.status, outcome: r.outcome, duration_ms: Math.round(r.durationMs * 100) / 100 },
        "upstream call",
      );
    },
  };
}

/** Where the v1 and v2 clients point: the configured reseller, or a sandbox started here. */
export async function connectReseller(config: Config, logger: Logger, observer?: UpstreamObserver): Promise<ResellerClients> {
  const timeoutMs = config.RESELLER_TIMEOUT_MS;
  const log = logger.child({ component: "reseller" });
  // Kept-alive connections for v1 and v2 together: one per job slot, a few more for panels' reads.
  const pool = createConnectionPool({ maxSockets: config.WORKER_CONCURRENCY + 4 });
  if (config.upstream.mode === "live") {
    const { apiUrl, apiToken, legacy } = config.upstream;
    return {
      v1: createV1Client({ baseUrl: apiUrl, token: apiToken, timeoutMs, logger: log, observer, pool }),
      v2: legacy ? createV2Client({ baseUrl: legacy.url, token: legacy.token, timeoutMs, logger: log, observer, pool }) : null,
      sandbox: null,
      close: () => pool.close(),
    };
  }
  const sandbox = await createSandbox({
    statePath: resolve(config.dataDir, "sandbox-state.json"),
    logger: logger.child({ component: "sandbox" }),
  }).listen(0, "127.0.0.1");
  // Lets the CLI's reseller commands find the embedded sandbox of a running service.
  const pointer = resolve(config.dataDir, "sandbox-upstream.json");
  writeFileSync(pointer, JSON.stringify({ apiUrl: sandbox.apiUrl, legacyUrl: sandbox.legacyUrl, pid: process.pid }) + "\n");
  return {
    v1: createV1Client({ baseUrl: sandbox.apiUrl, token: DEFAULT_SANDBOX_TOKENS.reseller, timeoutMs, logger: log, observer, pool }),
    v2: createV2Client({ baseUrl: sandbox.legacyUrl, token: DEFAULT_SANDBOX_TOKENS.legacy, timeoutMs, logger: log, observer, pool }),
    sandbox,
    close: async () => {
      rmSync(pointer, { force: true });
      await pool.close();
      await sandbox.close();
    },
  };
}

/** What /readyz must reach: the v1 API, and the legacy one when it provisions. */
function upstreamUrls(config: Config, reseller: ResellerClients): string[] {
  if (reseller.sandbox) return [reseller.sandbox.apiUrl];
  if (config.upstream.mode !== "live") return [];
  const { apiUrl, legacy } = config.upstream;
  return config.RESELLER_PROTOCOL === "v2" && legacy ? [apiUrl, legacy.url] : [apiUrl];
}

export interface ServiceOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /**
   * Reseller clients to use instead of connecting from config (tests point them at their sandbox).
   * Build them with `observer: observeUpstream(logger, metrics)` and pass the same `metrics` to
   * have their calls counted and logged.
   */
  reseller?: ResellerClients;
  /** The metrics to record into. (Default: a fresh registry) */
  metrics?: Metrics;
  /** Extra job handlers (e.g. mail) by kind. */
  handlers?: Record<string, JobHandler>;
  observer?: RunnerObserver;
  /** Poll interval of the job runner. (Default: 500 ms) */
  pollMs?: number;
  /** First retry delay. (Default: 2000 ms) */
  baseDelayMs?: number;
  /** A mailer instead of one built from SMTP_URL (tests). */
  mailer?: Mailer;
  /** Mail templates directory. (Default: config/mail) */
  templatesDir?: string;
  /** Run the renewal sweep on RENEWAL_CRON. (Default: true) */
  renewalSchedule?: boolean;
  /** Grace for running jobs at shutdown. (Default: SHUTDOWN_GRACE_MS) */
  shutdownGraceMs?: number;
}

export interface RunningService {
  url: string;
  db: Db;
  queue: JobQueue;
  services: ServiceStore;
  runner: JobRunner;
  upstream: Upstream;
  reseller: ResellerClients;
  sweep: Sweep;
  alerts: Alerts;
  mailer: Mailer;
  /** Prometheus metrics, as served at /metrics. */
  metrics: Metrics;
  /** The Express app behind `url`. */
  app: Express;
  /** One maintenance pass (renewals at risk, blocked renewals back in the queue), as the cron tick runs it. */
  maintenance(): void;
  /**
   * Stops intake and the runner, waits the shutdown grace for running jobs, closes everything.
   * `unfinished`: jobs still running when the grace ran out, left to their leases; their calls
   * may still be in flight and keep the process alive until they end.
   */
  close(): Promise<{ unfinished: number }>;
}

/** How long a statement of the running service waits for another connection's write lock. */
export const SERVING_BUSY_TIMEOUT_MS = 100;

/** The composition root: database, queue, runner, HTTP server. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const db = openDatabase(options.config.DATABASE_PATH);
  // What start-up has opened so far, closed again (last first) when it fails half-way: a service
  // that cannot start leaves nothing running that would keep the process alive.
  const opened: (() => unknown)[] = [() => db.close()];
  try {
    return await assemble(options, db, opened);
  } catch (err) {
    for (const close of opened.reverse()) {
      try {
        await close();
      } catch (closeErr) {
        options.logger.warn({ err: closeErr }, "could not close after a failed start");
      }
    }
    throw err;
  }
}

async function assemble(options: ServiceOptions, db: Db, opened: (() => unknown)[]): Promise<RunningService> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const applied = migrate(db);
  if (applied.length) logger.info({ migrations: applied.map((m) => `${m.id}_${m.name}`) }, "database migrated");
  // From here on a lock held by another process (a backup, a sqlite3 shell) must not stall the
  // event loop: better-sqlite3 waits for it synchronously. Requests answer 503 and jobs retry
  // instead; start-up above may wait the default 5 s, there is nothing to serve yet.
  db.pragma(`busy_timeout = ${SERVING_BUSY_TIMEOUT_MS}`);

  const metrics = options.metrics ?? createMetrics();
  const reseller = options.reseller ?? (await connectReseller(config, logger, observeUpstream(logger.child({ component: "reseller" }), metrics)));
  if (!options.reseller) opened.push(() => reseller.close());
  // WORKER_CONCURRENCY bounds upstream calls in flight; the runner runs twice as many jobs, so
  // a job busy with local work (a mail being written) never leaves an upstream slot idle.
  const upstream = createUpstream(config.RESELLER_PROTOCOL, reseller.v1, reseller.v2, { maxInFlight: config.WORKER_CONCURRENCY });
  // One group commit for every durable write: accepted events and charging intents share fsyncs.
  const group = createGroupCommit(db);
  const queue = new JobQueue(db, clock, { maxAttempts: config.JOB_MAX_ATTEMPTS, group });
  const services = new ServiceStore(db);
  const deps: LifecycleDeps = { db, services, queue, upstream, catalog: config.catalog, clock, settleMs: config.RESELLER_SETTLE_SECONDS * 1000 };

  const sweep = createSweep(db, queue, clock, config.RENEWAL_LEAD_DAYS);
  // Provisioning calls wait for their jobs here: no transaction and no worker slot held.
  const waiter = new JobWaiter(queue);
  const stopped = recordStoppedJobs(deps);
  const alerts = createAlerts({ db, queue, clock, logger: logger.child({ component: "alerts" }), operatorEmail: config.OPERATOR_EMAIL });
  const mailer = options.mailer ?? createMailer(config, { logger: logger.child({ component: "mail" }) });
  if (!options.mailer) opened.push(() => mailer.close());
  const handlers: Record<string, JobHandler> = {
    ...lifecycleHandlers(deps, { afterPayment: (id) => sweep.sweepService(id) }),
    ...mailHandlers(config, deps, logger, { mailer, templatesDir: options.templatesDir }),
    ...(config.OPERATOR_EMAIL ? { [ALERT_JOB_KIND]: alertMailHandler(mailer, config.MAIL_FROM, config.OPERATOR_EMAIL) } : {}),
    ...options.handlers,
  };
  // An `rm` or `mv` over DATABASE_PATH leaves this connection writing into a file nobody will
  // read again: from then on, no webhook is accepted, no job claimed, and /readyz says why.
  const dbFile = watchDatabaseFile(config.DATABASE_PATH, {
    onLost: (reason) => logger.error({ path: config.DATABASE_PATH, reason }, `database file lost: ${reason}`),
  });
  opened.push(() => dbFile.stop());
  const runner = new JobRunner({
    queue,
    canClaim: () => dbFile.check() === undefined,
    clock,
    logger: logger.child({ component: "jobs" }),
    concurrency: config.WORKER_CONCURRENCY * 2,
    maxDelayMs: config.RETRY_MAX_DELAY_SECONDS * 1000,
    baseDelayMs: options.baseDelayMs,
    pollMs: options.pollMs,
    handlers,
    observer: {
      attemptFinished: (job, outcome, ms, error) => {
        waiter.notify(job.id);
        metrics.jobs.attemptFinished(job, outcome, ms);
        if (outcome === "succeeded") resolveOnSuccess(alerts, job);
        options.observer?.attemptFinished?.(job, outcome, ms, error);
      },
      jobStopped: (job, state, message, error) => {
        stopped(job, state, message, error);
        alertForStoppedJob(alerts, job, state, message, error);
        options.observer?.jobStopped?.(job, state, message, error);
      },
    },
  });

  metrics.track({ jobCounts: () => queue.counts(), openAlerts: () => alerts.open().length });

  const accept = guardAccept(
    groupCommit(createIntake({ db, queue, services, catalog: config.catalog, clock, allowPrivateIps: config.ALLOW_PRIVATE_IPS }), group),
    dbFile.check,
  );
  const app = createApp({
    logger: logger.child({ component: "http" }),
    routers: [
      healthRouter({ db, metrics, upstreamUrls: upstreamUrls(config, reseller), databaseLost: dbFile.check }),
      openApiRouter(),
      webhookRouter(billingSource(config.WEBHOOK_SECRETS.map(secretKey)), { accept, catalog: config.catalog, clock, logger, observer: metrics.webhooks }),
      ...adapterRouters(config, { accept, clock, logger, services, observer: metrics.webhooks }),
      adminRouter({ adminToken: config.ADMIN_TOKEN, services, queue }),
      ...(config.PROVISIONING_TOKEN
        ? [
            provisioningRouter({
              token: config.PROVISIONING_TOKEN,
              provisioning: createProvisioning({
                accept,
                services,
                queue,
                waiter,
                catalog: config.catalog,
                waitMs: config.PROVISION_WAIT_SECONDS * 1000,
                // A read for a panel's client area: straight to the reseller, not behind the jobs' upstream slots.
                installCommand: async (ip, type) => (await reseller.v1.installCommand({ ip, type })).command,
                logger: logger.child({ component: "provisioning" }),
              }),
            }),
          ]
        : []),
      reconcileRouter({ adminToken: config.ADMIN_TOKEN, db, services, upstream, clock, queue, logger: logger.child({ component: "reconcile" }) }),
    ],
  });

  // Listen before anything runs in the background: a service that cannot listen must not
  // claim jobs or tick the cron without anyone able to reach it.
  const server = await listen(app, config.PORT, config.HOST);
  opened.push(() => new Promise<void>((r) => server.close(() => r())));
  const address = server.address();
  const url = `http://${hostPort(config.HOST, typeof address === "object" && address ? address.port : config.PORT)}`;
  runner.start();
  const healEveryMs = config.BLOCKED_RETRY_MINUTES * 60_000;
  const heal = () => {
    try {
      healBlockedRenewals(queue, clock, healEveryMs);
    } catch (err) {
      // A timer must not throw: that would end the process. The next tick tries again.
      logger.error({ err }, "could not put blocked renewals back in the queue; trying again later");
    }
  };
  const maintenance = () => {
    checkRenewalsAtRisk(db, clock, alerts);
    heal();
  };
  const renewals =
    options.renewalSchedule === false
      ? null
      : scheduleRenewals(config.RENEWAL_CRON, sweep, logger.child({ component: "renewals" }), () => checkRenewalsAtRisk(db, clock, alerts));
  // Its own timer, so healing does not depend on how often RENEWAL_CRON ticks.
  const healTimer = setInterval(heal, Math.min(60_000, healEveryMs));
  healTimer.unref();

  let closing: Promise<{ unfinished: number }> | undefined;
  const close = () =>
    (closing ??= (async () => {
      renewals?.stop();
      clearInterval(healTimer);
      dbFile.stop();
      // Jobs still waiting for an upstream slot go back to the queue untouched.
      upstream.stopCalls();
      const { unfinished } = await runner.stop(options.shutdownGraceMs ?? config.SHUTDOWN_GRACE_MS);
      if (unfinished) logger.warn({ unfinished }, "jobs still running at shutdown; their leases will expire and they resume on restart");
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      if (!options.reseller) await reseller.close();
      if (!options.mailer) mailer.close();
      db.close();
      return { unfinished };
    })());

  return { url, db, queue, services, runner, upstream, reseller, sweep, alerts, mailer, metrics, app, maintenance, close };
}
