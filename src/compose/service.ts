import { resolve } from "node:path";
import type { Express } from "express";
import { alertMailJob, createAlerts, type Alerts } from "../alerts/alerts.js";
import { alertForStoppedJob, resolveOnSuccess } from "../alerts/job-alerts.js";
import { checkQueueLag } from "../alerts/queue-lag.js";
import { systemClock, type Clock } from "../clock.js";
import { secretValues } from "../config/describe.js";
import type { Config } from "../config/load.js";
import { RESTART_ONLY } from "../config/restart-only.js";
import { adminRouter } from "../admin/admin-routes.js";
import { adminActions } from "../admin/actions.js";
import { consoleRouter } from "../console/routes.js";
import { adminFunctions } from "../console/admin-functions.js";
import { createApp } from "../http/app.js";
import { failureLimit } from "../http/failure-limit.js";
import { healthRouter } from "../admin/health-routes.js";
import { hostPort, listen } from "../http/listen.js";
import { openApiRouter } from "../admin/openapi.js";
import { reconcileRouter } from "../admin/reconcile-routes.js";
import { adoptRouter } from "../admin/adopt-routes.js";
import { pricesOf } from "../catalog/prices.js";
import { auditRouter } from "../admin/audit-routes.js";
import { forecastRouter } from "../admin/forecast-routes.js";
import { operatorDirectory, type OperatorDirectory } from "../http/auth.js";
import { checkForecastShortfall, renewalPrices, type ForecastDeps } from "../renewals/forecast.js";
import type { JobDefinition } from "../jobs/define.js";
import { JobRunner, type RunnerObserver } from "../jobs/runner.js";
import type { LifecycleDeps } from "../lifecycle/deps.js";
import { lifecycleJobs, skipRecord, stopRecord } from "../lifecycle/handlers.js";
import type { Logger } from "../log/logger.js";
import { createMailer, mailJobs, type Mailer } from "../mail/index.js";
import { createMetrics, type Metrics } from "../observability/metrics.js";
import { sharedRead } from "../observability/shared-read.js";
import { JobWaiter } from "../jobs/waiter.js";
import { licenseAnswerer } from "../provisioning/answers.js";
import { createProvisioning } from "../provisioning/provisioning.js";
import { outcomeWaiter } from "../provisioning/wait.js";
import { cachedInstallCommands } from "../lifecycle/install-commands.js";
import type { Intake } from "../intake/intake.js";
import { provisioningOffRouter, provisioningRouter } from "../provisioning/routes.js";
import { checkRenewalsAtRisk, healBlockedRenewals } from "../renewals/healing.js";
import { scheduleRenewals } from "../renewals/schedule.js";
import { createSweep, type Sweep } from "../renewals/sweep.js";
import { SCRAPE_WAIT_MS } from "../reseller/balance.js";
import { ownBalance } from "./reseller-balance.js";
import { connectReseller, observeUpstream, type ResellerClients } from "./reseller-connection.js";
import { createUpstream, type Upstream } from "../reseller/upstream.js";
import { prune, scheduleRetention, type PruneReport } from "../retention/retention.js";
import { openStore } from "../store/open.js";
import type { Store } from "../store/store.js";
import { adapterRouters } from "../webhooks/adapters/index.js";
import { guardAccept } from "../intake/availability.js";
import { billingSource } from "../webhooks/billing-source.js";
import { createIntake } from "../intake/intake.js";
import { webhookRouter } from "../webhooks/route.js";
import { secretKey } from "../webhooks/signature.js";

// For tests that build their own reseller clients with the service's metrics.
export { observeUpstream };


/**
 * The mailer the mail jobs hold, whose transport a reload can replace (SMTP_URL rotated). The old
 * one is closed a minute later, once a mail it is still sending has had its time.
 */
function swappableMailer(initial: Mailer): Mailer & { swap(next: Mailer): void } {
  let current = initial;
  return {
    get description() {
      return current.description;
    },
    send: (mail) => current.send(mail),
    close: () => current.close(),
    swap(next) {
      const old = current;
      current = next;
      setTimeout(() => old.close(), 60_000).unref();
    },
  };
}

/** host:port of SMTP_URL, for /readyz's reachability check; undefined for the file outbox. */
function smtpAddressOf(config: Config): { host: string; port: number } | undefined {
  if (!config.SMTP_URL) return undefined;
  try {
    const u = new URL(config.SMTP_URL);
    return { host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port) || (u.protocol === "smtps:" ? 465 : 587) };
  } catch {
    return undefined;
  }
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
  /** Extra job kinds with their handlers (tests). */
  jobs?: JobDefinition[];
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
  /** Prune daily what RETENTION_DAYS lets go. (Default: true) */
  retentionSchedule?: boolean;
  /** Grace for running jobs at shutdown. (Default: SHUTDOWN_GRACE_MS) */
  shutdownGraceMs?: number;
  /**
   * Who may log in to the console, for a configuration. (Default: the admin API's directory,
   * every ADMIN_TOKEN as the admin named "admin" and OPERATORS_FILE's operators)
   */
  consoleOperators?: (config: Config) => OperatorDirectory;
}

export interface RunningService {
  url: string;
  /** Every business operation on the bridge's state (SQLite or PostgreSQL). */
  store: Store;
  /** The store's jobs (admin API and tests read them here). */
  queue: Store["jobs"];
  /** The store's services. */
  services: Store["services"];
  runner: JobRunner;
  upstream: Upstream;
  reseller: ResellerClients;
  sweep: Sweep;
  alerts: Alerts;
  mailer: Mailer;
  /** Prometheus metrics, as served at /metrics. */
  metrics: Metrics;
  /** The Express app behind `url` (the one of the running configuration). */
  readonly app: Express;
  /** The running configuration (replaced by `reload`). */
  readonly config: Config;
  /**
   * Applies a new, valid configuration (SIGHUP): tokens, secrets, the catalogue and everything
   * the HTTP surface reads take effect for requests that begin after it; `restartNeeded` names
   * the changed settings that keep their running values until a restart (RESTART_ONLY).
   */
  reload(next: Config): { restartNeeded: string[] };
  /** One maintenance pass (renewals at risk, blocked renewals back in the queue), as the cron tick runs it. */
  maintenance(): Promise<void>;
  /** The retention prune (RETENTION_DAYS of the running configuration), as the daily timer runs it; `dryRun` counts only. */
  prune(options?: { dryRun?: boolean }): Promise<PruneReport>;
  /**
   * Stops intake and the runner, waits the shutdown grace for running jobs, closes everything.
   * `unfinished`: jobs still running when the grace ran out, left to their leases; their calls
   * may still be in flight and keep the process alive until they end.
   */
  close(): Promise<{ unfinished: number }>;
}

/** The composition root: store, runner, HTTP server. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const clock = options.clock ?? systemClock;
  const store = await openStore(options.config, { clock, logger: options.logger, serving: true });
  // What start-up has opened so far, closed again (last first) when it fails half-way: a service
  // that cannot start leaves nothing running that would keep the process alive.
  const opened: (() => unknown)[] = [() => store.close()];
  try {
    return await assemble(options, store, clock, opened);
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

async function assemble(options: ServiceOptions, store: Store, clock: Clock, opened: (() => unknown)[]): Promise<RunningService> {
  const { config, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const reseller = options.reseller ?? (await connectReseller(config, logger, observeUpstream(logger.child({ component: "reseller" }), metrics)));
  if (!options.reseller) opened.push(() => reseller.close());
  // WORKER_CONCURRENCY bounds upstream calls in flight; the runner runs twice as many jobs, so
  // a job busy with local work (a mail being written) never leaves an upstream slot idle.
  const upstream = createUpstream(config.RESELLER_PROTOCOL, reseller.v1, reseller.v2, { maxInFlight: config.WORKER_CONCURRENCY });
  const deps: LifecycleDeps = { store, upstream, catalog: config.catalog, clock, settleMs: config.RESELLER_SETTLE_SECONDS * 1000 };

  const sweep = createSweep(store, config.RENEWAL_LEAD_DAYS);
  // Provisioning calls wait for their jobs here: no transaction and no worker slot held.
  const waiter = new JobWaiter(store.jobs);
  const alerts = createAlerts({ store, logger: logger.child({ component: "alerts" }), operatorEmail: config.OPERATOR_EMAIL });
  const mailer = swappableMailer(options.mailer ?? createMailer(config, { logger: logger.child({ component: "mail" }) }));
  if (!options.mailer) opened.push(() => mailer.close());
  const definitions: JobDefinition[] = [
    ...lifecycleJobs(deps, { afterPayment: (id) => sweep.sweepService(id) }),
    ...mailJobs(config, deps, logger, { mailer, templatesDir: options.templatesDir }),
    ...(config.OPERATOR_EMAIL ? [alertMailJob(mailer, config.MAIL_FROM, config.OPERATOR_EMAIL)] : []),
    ...(options.jobs ?? []),
  ];
  const lost = () => store.lost();
  const runner = new JobRunner({
    jobs: store.jobs,
    onJobReady: (l) => store.onJobReady(l),
    isBusy: (err) => store.isBusy(err),
    canClaim: () => lost() === undefined,
    clock,
    logger: logger.child({ component: "jobs" }),
    concurrency: config.WORKER_CONCURRENCY * 2,
    maxDelayMs: config.RETRY_MAX_DELAY_SECONDS * 1000,
    baseDelayMs: options.baseDelayMs,
    pollMs: options.pollMs,
    definitions,
    stopRecord,
    skipRecord,
    observer: {
      attemptFinished: (job, outcome, ms, error) => {
        waiter.notify(job.id);
        metrics.jobs.attemptFinished(job, outcome, ms);
        if (outcome === "succeeded") void resolveOnSuccess(alerts, job).catch((err: unknown) => logger.warn({ err }, "could not resolve alerts"));
        options.observer?.attemptFinished?.(job, outcome, ms, error);
      },
      jobStopped: async (job, state, message, error) => {
        await alertForStoppedJob(alerts, job, state, message, error);
        await options.observer?.jobStopped?.(job, state, message, error);
      },
    },
  });

  // The reseller balance of the bridge's own account, for /metrics and GET /admin/balance.
  const balance = ownBalance(config, { sandbox: reseller.sandbox, clock, logger, observer: observeUpstream(logger.child({ component: "reseller" }), metrics) });
  opened.push(() => balance.close());
  // The database's gauges are one read (one statement on PostgreSQL), shared by a scrape's gauges.
  const gauges = sharedRead(() => store.gauges());
  metrics.track({
    jobCounts: async () => (await gauges()).jobs,
    queue: async () => {
      const q = (await gauges()).queue;
      return { depth: Object.values(q.queued).reduce((a, b) => a + b, 0), oldestDueAgeMs: q.oldestDueAgeMs };
    },
    openAlerts: async () => (await gauges()).openAlerts,
    resellerBalance: () => balance.read({ waitMs: SCRAPE_WAIT_MS }),
  });

  // Draining (SIGTERM): /readyz says so at once, new events and provisioning calls are refused
  // with 503 and Retry-After (a balancer or the panel sends them to another instance or later),
  // and calls waiting for their work are answered 202 pending before the listener closes.
  // (A lost database needs no check here: the store refuses every write, whichever way it came.)
  let draining = false;
  const unavailable = () =>
    draining ? { message: "the service is shutting down; send it again (another instance, or this one once restarted, takes it)", retryAfterSeconds: 5 } : undefined;

  // Install commands for the panels' client areas: through the upstream, within WORKER_CONCURRENCY, as the install mail reads them.
  const installCommands = cachedInstallCommands(upstream, clock);
  /** The provisioning API of one configuration: it translates, the intake decides, it waits. */
  const provisioningOf = (cfg: Config, accept: Intake) => {
    const license = licenseAnswerer({ catalog: cfg.catalog, installCommands, logger: logger.child({ component: "provisioning" }) });
    const outcome = outcomeWaiter({ services: store.services, jobs: store.jobs, waiter, waitMs: cfg.PROVISION_WAIT_SECONDS * 1000, now: () => Date.now(), license });
    return createProvisioning({ accept, services: store.services, jobs: store.jobs, outcome, license });
  };

  // What the forecast reads: the sweep's rule (its lead days as the sweep started), the balance reader, and the configuration's prices (its catalogue follows a reload).
  const forecastDepsOf = (cfg: Config): ForecastDeps => ({ store, balance, prices: renewalPrices(pricesOf(cfg)), leadDays: config.RENEWAL_LEAD_DAYS, clock });

  /** Who each token belongs to under a configuration: ADMIN_TOKEN's admin and OPERATORS_FILE's operators. */
  const directoryOf = (cfg: Config): OperatorDirectory => operatorDirectory(cfg.ADMIN_TOKEN, cfg.operators);
  /** Who logs in to the console (a test may give it operators of its own). */
  const consoleDirectoryOf = (cfg: Config): OperatorDirectory => options.consoleOperators?.(cfg) ?? directoryOf(cfg);
  // Failed console logins and admin API tokens, counted together per client (one guesser, one
  // count); they outlive a reload: a new router must not forget a guesser. The provisioning
  // API's token is left out: its client is the panel, whose lock-out would stop orders.
  const tokenFailures = failureLimit({ clock });

  /** The HTTP surface for one configuration: rebuilt on SIGHUP, so tokens, secrets and the catalogue change without a restart. */
  const buildApp = (cfg: Config): Express => {
    // ADMIN_TOKEN (the admin named "admin") and OPERATORS_FILE, as this configuration has them.
    const access = { operators: directoryOf(cfg), failures: tokenFailures, audit: store.audit, services: store.services };
    const accept = guardAccept(createIntake({ store, catalog: cfg.catalog, allowPrivateIps: cfg.ALLOW_PRIVATE_IPS }), unavailable);
    // Every change an operator makes, whether through the admin API or the console.
    const actions = adminActions({ store, accept, reconcile: { store, upstream }, logger: logger.child({ component: "reconcile" }) });
    const forecast = forecastDepsOf(cfg);
    // The adoption plan's prices, for the admin API's route and the console's page alike.
    const prices = pricesOf(cfg);
    return createApp({
      logger: logger.child({ component: "http" }),
      isBusy: (err) => store.isBusy(err),
      secrets: secretValues(cfg),
      // The operators' tokens are known only by their SHA-256: found in a path by hashing.
      secretDigests: cfg.operators.map((o) => o.token_sha256),
      trustProxy: cfg.TRUST_PROXY,
      routers: [
        healthRouter({ store, metrics, upstreamUrls: upstreamUrls(cfg, reseller), databaseLost: lost, draining: () => draining, smtp: smtpAddressOf(cfg) }),
        openApiRouter(),
        webhookRouter(billingSource(cfg.WEBHOOK_SECRETS.map(secretKey)), { accept, catalog: cfg.catalog, clock, logger, observer: metrics.webhooks }),
        ...adapterRouters(cfg, { accept, clock, logger, services: store.services, observer: metrics.webhooks }),
        adminRouter({ ...access, store, balance, actions }),
        auditRouter({ ...access, audit: store.audit }),
        forecastRouter({ ...access, forecast }),
        cfg.PROVISIONING_TOKEN
          ? provisioningRouter({
              token: cfg.PROVISIONING_TOKEN,
              services: store.services,
              logger: logger.child({ component: "provisioning" }),
              observer: metrics.provisioning,
              provisioning: provisioningOf(cfg, accept),
            })
          : provisioningOffRouter(),
        reconcileRouter({ operators: access.operators, failures: tokenFailures, store, upstream, logger: logger.child({ component: "reconcile" }) }),
        adoptRouter({
          operators: access.operators,
          failures: tokenFailures,
          store,
          upstream,
          catalog: cfg.catalog,
          prices,
          allowPrivateIps: cfg.ALLOW_PRIVATE_IPS,
          intake: accept,
          logger: logger.child({ component: "adopt" }),
        }),
        ...(cfg.CONSOLE === "on"
          ? [
              consoleRouter({
                store,
                actions,
                operators: consoleDirectoryOf(cfg),
                loginLimit: tokenFailures,
                balance,
                catalog: cfg.catalog,
                installCommands,
                admin: adminFunctions({
                  store,
                  forecast,
                  adoption: {
                    store,
                    upstream,
                    catalog: cfg.catalog,
                    prices,
                    allowPrivateIps: cfg.ALLOW_PRIVATE_IPS,
                    intake: accept,
                  },
                }),
                clock,
                logger: logger.child({ component: "console" }),
              }),
            ]
          : []),
      ],
    });
  };
  let current = { config, app: buildApp(config) };
  if (!config.PROVISIONING_TOKEN) {
    logger.warn("PROVISIONING_TOKEN is not set: the provisioning API (/provision/v1, what the panel modules call) is off and answers 404 provisioning_off");
  }

  // Listen before anything runs in the background: a service that cannot listen must not
  // claim jobs or tick the cron without anyone able to reach it.
  // The listener asks for the app of the moment: a reload swaps it for requests not yet begun.
  const server = await listen((req, res) => current.app(req, res), config.PORT, config.HOST);
  opened.push(() => new Promise<void>((r) => server.close(() => r())));
  const address = server.address();
  const url = `http://${hostPort(config.HOST, typeof address === "object" && address ? address.port : config.PORT)}`;
  await runner.start();
  const healEveryMs = config.BLOCKED_RETRY_MINUTES * 60_000;
  // A timer must not throw: that would end the process. The next tick tries again.
  const heal = () =>
    healBlockedRenewals(store, healEveryMs).catch((err: unknown) => logger.error({ err }, "could not put blocked renewals back in the queue; trying again later"));
  // The week ahead's renewals against the balance: an alert while it will not cover them.
  const shortfall = () =>
    checkForecastShortfall(forecastDepsOf(current.config), alerts).then(
      () => undefined,
      (err: unknown) => logger.warn({ err }, "could not check the balance against the renewals due; trying again on the next tick"),
    );
  const atRisk = async () => {
    await checkRenewalsAtRisk(store, alerts);
    await shortfall();
  };
  const lagMs = config.QUEUE_LAG_ALERT_MINUTES * 60_000;
  const queueLag = () =>
    checkQueueLag(store, alerts, lagMs).catch((err: unknown) => logger.warn({ err }, "could not check the queue's lag; trying again in a minute"));
  const maintenance = async () => {
    await atRisk();
    await heal();
  };
  const renewals = options.renewalSchedule === false ? null : scheduleRenewals(config.RENEWAL_CRON, sweep, logger.child({ component: "renewals" }), atRisk);
  // Its own timer, so healing does not depend on how often RENEWAL_CRON ticks.
  const healTimer = setInterval(() => void heal(), Math.min(60_000, healEveryMs));
  healTimer.unref();
  // RETENTION_DAYS as the running configuration has it (a SIGHUP applies a new value at the next prune).
  const outboxDir = resolve(config.dataDir, "outbox");
  const pruneNow = (o: { dryRun?: boolean } = {}) =>
    prune({ store, clock, days: current.config.RETENTION_DAYS, terminatedDays: current.config.TERMINATED_RETENTION_DAYS, auditDays: current.config.AUDIT_RETENTION_DAYS, outboxDir }, o);
  const retention = options.retentionSchedule === false ? null : scheduleRetention(() => pruneNow(), logger.child({ component: "retention" }));
  // Every minute, on its own timer (not in maintenance(), which tests run after moving a manual
  // clock by days): a lag is noticed within a minute of crossing QUEUE_LAG_ALERT_MINUTES.
  const lagTimer = setInterval(() => void queueLag(), 60_000);
  lagTimer.unref();

  let closing: Promise<{ unfinished: number }> | undefined;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      // Calls waiting for their work answer now (202 pending, or their outcome), while the listener is still open.
      waiter.releaseAll();
      renewals?.stop();
      retention?.stop();
      clearInterval(healTimer);
      clearInterval(lagTimer);
      // Jobs still waiting for an upstream slot go back to the queue untouched.
      upstream.stopCalls();
      const { unfinished } = await runner.stop(options.shutdownGraceMs ?? config.SHUTDOWN_GRACE_MS);
      if (unfinished) logger.warn({ unfinished }, "jobs still running at shutdown; their leases will expire and they resume on restart");
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await balance.close();
      if (!options.reseller) await reseller.close();
      if (!options.mailer) mailer.close();
      await store.close();
      return { unfinished };
    })());

  /** An operator removed, demoted, promoted or given new tokens by a reload: their console sessions end (log in again). */
  const endChangedSessions = (was: OperatorDirectory, now: OperatorDirectory) => {
    for (const name of was.names().filter((n) => was.credentialOf(n) !== now.credentialOf(n))) {
      store.sessions.deleteFor(name).catch((err: unknown) => logger.warn({ err, operator: name }, "could not end the console sessions of an operator the reload changed"));
    }
  };
  /**
   * A new configuration from SIGHUP, already validated: the HTTP surface is rebuilt from it
   * (tokens, webhook and panel secrets, catalogue, TRUST_PROXY, provisioning), and the jobs see
   * the new catalogue. Settings only a restart can change are named, and keep their old values.
   */
  const reload = (next: Config): { restartNeeded: string[] } => {
    const restartNeeded = RESTART_ONLY.filter((k) => JSON.stringify(current.config[k]) !== JSON.stringify(next[k]));
    const app = buildApp(next);
    deps.catalog = next.catalog;
    // The reseller's tokens (rotated in its panel): the next call uses the new one. A token given
    // by a test's own clients (options.reseller) is theirs to set.
    const was = current.config.upstream;
    const now = next.upstream;
    if (!options.reseller && was.mode === "live" && now.mode === "live") {
      if (now.apiToken !== was.apiToken) reseller.v1.setToken(now.apiToken);
      if (now.legacy && was.legacy && now.legacy.token !== was.legacy.token) reseller.v2?.setToken(now.legacy.token);
    }
    // A new SMTP server or password: the next mail goes through a transport built from it.
    if (!options.mailer && next.SMTP_URL !== current.config.SMTP_URL) mailer.swap(createMailer(next, { logger: logger.child({ component: "mail" }) }));
    balance.configure(next);
    endChangedSessions(consoleDirectoryOf(current.config), consoleDirectoryOf(next));
    current = { config: next, app };
    return { restartNeeded };
  };

  return {
    url,
    store,
    queue: store.jobs,
    services: store.services,
    runner,
    upstream,
    reseller,
    sweep,
    alerts,
    mailer,
    metrics,
    get app() {
      return current.app;
    },
    get config() {
      return current.config;
    },
    maintenance,
    prune: pruneNow,
    reload,
    close,
  };
}
