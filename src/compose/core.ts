import { alertMailJob, createAlerts, type Alerts } from "../alerts/alerts.js";
import { alertForStoppedJob, resolveOnSuccess } from "../alerts/job-alerts.js";
import { systemClock, type Clock } from "../clock.js";
import type { Config } from "../config/load.js";
import type { JobDefinition } from "../jobs/define.js";
import { JobRunner } from "../jobs/runner.js";
import { JobWaiter } from "../jobs/waiter.js";
import type { LifecycleDeps } from "../lifecycle/deps.js";
import { lifecycleJobs, skipRecord, stopRecord } from "../lifecycle/handlers.js";
import type { Logger } from "../log/logger.js";
import { createMailer, mailJobs, type Mailer } from "../mail/index.js";
import { createMetrics, type Metrics } from "../observability/metrics.js";
import { createSweep, type Sweep } from "../renewals/sweep.js";
import { createUpstream, type Upstream } from "../reseller/upstream.js";
import { openStore } from "../store/open.js";
import type { Store } from "../store/store.js";
import type { Opened, ServiceOptions } from "./options.js";
import { connectProviders, type ProviderConnections } from "./provider-connections.js";
import { providerRegistry } from "./provider-registry.js";
import { connectReseller, observeUpstream, type ResellerClients } from "./reseller-connection.js";

/**
 * The service's core: what the jobs run on and what every way in shares, one of each for the
 * life of the process (a reload reconfigures them, it does not rebuild them).
 */
export interface Core {
  /** The configuration the service started with (RESTART_ONLY settings keep these values). */
  readonly started: Config;
  logger: Logger;
  clock: Clock;
  store: Store;
  metrics: Metrics;
  /** The reseller's clients; null when no reseller is configured (a live catalogue of Manage2 and CLN products alone). */
  reseller: ResellerClients | null;
  /** The reseller's Upstream (reconcile and adoption read its list); null without a reseller. */
  upstream: Upstream | null;
  /** Manage2's and CLN's clients, the configured ones. */
  providers: ProviderConnections;
  /** What every job handler reads; its catalogue follows a reload. */
  lifecycle: LifecycleDeps;
  sweep: Sweep;
  /** Provisioning calls wait for their jobs here: no transaction and no worker slot held. */
  waiter: JobWaiter;
  alerts: Alerts;
  mailer: Mailer;
  runner: JobRunner;
  /** Why the store has lost its database, or undefined while it has it. */
  lost(): string | undefined;
  /** A reloaded configuration for the jobs: the catalogue, the reseller's tokens, the mail transport. */
  reconfigure(was: Config, next: Config): void;
  /** No new upstream call, no new claim; running jobs have `graceMs` to finish. */
  stopWork(graceMs: number): Promise<{ unfinished: number }>;
  /** Closes what the core opened: the reseller's connections, the mail transport, the store. */
  close(): Promise<void>;
}

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

/**
 * The reseller's upstream and the clients behind it: the configured reseller (or a test's
 * clients), or none when the configuration has no reseller (then no sandbox of it either).
 */
async function connectUpstream(options: ServiceOptions, metrics: Metrics, opened: Opened): Promise<{ reseller: ResellerClients | null; upstream: Upstream | null }> {
  const { config, logger } = options;
  if (!options.reseller && config.upstream.mode === "none") return { reseller: null, upstream: null };
  const reseller = options.reseller ?? (await connectReseller(config, logger, observeUpstream(logger.child({ component: "reseller" }), metrics)));
  if (!options.reseller) opened.push(() => reseller.close());
  // WORKER_CONCURRENCY bounds upstream calls in flight; the runner runs twice as many jobs, so
  // a job busy with local work (a mail being written) never leaves an upstream slot idle.
  const upstream = createUpstream(config.RESELLER_PROTOCOL, reseller.v1, reseller.v2, { maxInFlight: config.WORKER_CONCURRENCY });
  return { reseller, upstream };
}

/**
 * The reseller's tokens (rotated in its panel): the next call uses the new one. A token given
 * by a test's own clients (options.reseller) is theirs to set.
 */
function rotateResellerTokens(reseller: ResellerClients, was: Config, next: Config): void {
  const before = was.upstream;
  const now = next.upstream;
  if (before.mode !== "live" || now.mode !== "live") return;
  if (now.apiToken !== before.apiToken) reseller.v1.setToken(now.apiToken);
  if (now.legacy && before.legacy && now.legacy.token !== before.legacy.token) reseller.v2?.setToken(now.legacy.token);
}

/** Store, clock, upstream, the lifecycle's deps, and the runner with every job kind (not started). */
export async function buildCore(options: ServiceOptions, opened: Opened): Promise<Core> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const store = await openStore(config, { clock, logger, serving: true });
  opened.push(() => store.close());
  const metrics = options.metrics ?? createMetrics();
  const { reseller, upstream } = await connectUpstream(options, metrics, opened);
  const connections = await connectProviders(config, logger, (provider) => observeUpstream(logger.child({ component: provider }), metrics, provider));
  opened.push(() => connections.close());
  const providers = providerRegistry(config, { upstream, manage2: connections.manage2?.client ?? null, cln: connections.cln?.client ?? null }, () => lifecycle.catalog);
  const lifecycle: LifecycleDeps = { store, providers, catalog: config.catalog, clock, settleMs: config.RESELLER_SETTLE_SECONDS * 1000 };

  const sweep = createSweep(store, config.RENEWAL_LEAD_DAYS);
  const waiter = new JobWaiter(store.jobs);
  const alerts = createAlerts({ store, logger: logger.child({ component: "alerts" }), operatorEmail: config.OPERATOR_EMAIL });
  const mailer = swappableMailer(options.mailer ?? createMailer(config, { logger: logger.child({ component: "mail" }) }));
  if (!options.mailer) opened.push(() => mailer.close());
  const definitions: JobDefinition[] = [
    ...lifecycleJobs(lifecycle, { afterPayment: (id) => sweep.sweepService(id) }),
    ...mailJobs(config, lifecycle, logger, { mailer, templatesDir: options.templatesDir }),
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

  return {
    started: config,
    logger,
    clock,
    store,
    metrics,
    reseller,
    upstream,
    providers: connections,
    lifecycle,
    sweep,
    waiter,
    alerts,
    mailer,
    runner,
    lost,
    reconfigure(was, next) {
      lifecycle.catalog = next.catalog;
      if (!options.reseller && reseller) rotateResellerTokens(reseller, was, next);
      connections.rotate(was, next);
      // A new SMTP server or password: the next mail goes through a transport built from it.
      if (!options.mailer && next.SMTP_URL !== was.SMTP_URL) mailer.swap(createMailer(next, { logger: logger.child({ component: "mail" }) }));
    },
    async stopWork(graceMs) {
      // Jobs still waiting for an upstream slot go back to the queue untouched.
      lifecycle.providers.stopCalls();
      const { unfinished } = await runner.stop(graceMs);
      if (unfinished) logger.warn({ unfinished }, "jobs still running at shutdown; their leases will expire and they resume on restart");
      return { unfinished };
    },
    async close() {
      if (!options.reseller) await reseller?.close();
      await connections.close();
      if (!options.mailer) mailer.close();
      await store.close();
    },
  };
}
