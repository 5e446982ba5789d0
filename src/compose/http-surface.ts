import type { Server } from "node:http";
import type { Express } from "express";
import type { AdoptionDeps } from "../adoption/adopt.js";
import { adminActions } from "../admin/actions.js";
import { adminRouter } from "../admin/admin-routes.js";
import { adoptRouter } from "../admin/adopt-routes.js";
import { auditRouter } from "../admin/audit-routes.js";
import { forecastRouter } from "../admin/forecast-routes.js";
import { healthRouter, type ProviderProbe } from "../admin/health-routes.js";
import { openApiRouter } from "../admin/openapi.js";
import { reconcileRouter } from "../admin/reconcile-routes.js";
import { pricesOf } from "../catalog/prices.js";
import { secretValues } from "../config/describe.js";
import type { Config } from "../config/load.js";
import { adminFunctions } from "../console/admin-functions.js";
import { consoleRouter } from "../console/routes.js";
import { createApp } from "../http/app.js";
import { operatorDirectory, type OperatorDirectory } from "../http/auth.js";
import { failureLimit } from "../http/failure-limit.js";
import { hostPort, listen } from "../http/listen.js";
import { guardAccept } from "../intake/availability.js";
import { createIntake, type Intake } from "../intake/intake.js";
import { cachedInstallCommands } from "../lifecycle/install-commands.js";
import { licenseAnswerer } from "../provisioning/answers.js";
import { createProvisioning } from "../provisioning/provisioning.js";
import { provisioningOffRouter, provisioningRouter } from "../provisioning/routes.js";
import { outcomeWaiter } from "../provisioning/wait.js";
import { adapterRouters } from "../webhooks/adapters/index.js";
import { billingSource } from "../webhooks/billing-source.js";
import { webhookRouter } from "../webhooks/route.js";
import { secretKey } from "../webhooks/signature.js";
import type { Background } from "./background.js";
import type { Core } from "./core.js";
import type { Opened, ServiceOptions } from "./options.js";
import { PROVIDER_TITLES } from "../vocabulary/providers.js";
import { NO_RESELLER } from "./no-reseller.js";
import type { ProviderConnections } from "./provider-connections.js";
import type { ResellerClients } from "./reseller-connection.js";

/** The HTTP surface: one Express app per configuration, behind one listener. */
export interface HttpSurface {
  url: string;
  /** The app of the running configuration. */
  readonly app: Express;
  /** The app of a configuration, built but not serving yet (throws what the configuration cannot build). */
  appFor(cfg: Config): Express;
  /** Serves `app`, built for `next`, to requests not yet begun; console sessions of operators `next` changed end. */
  replace(was: Config, next: Config, app: Express): void;
  /**
   * Draining (SIGTERM): /readyz says so at once, new events and provisioning calls are refused
   * with 503 and Retry-After (a balancer or the panel sends them to another instance or later).
   */
  drain(): void;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
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

/** What /readyz must reach of the reseller: its v1 API (and the legacy one when it provisions), when there is a reseller. */
function upstreamUrls(config: Config, reseller: ResellerClients | null): string[] {
  if (reseller?.sandbox) return [reseller.sandbox.apiUrl];
  if (config.upstream.mode !== "live") return [];
  const { apiUrl, legacy } = config.upstream;
  return config.RESELLER_PROTOCOL === "v2" && legacy ? [apiUrl, legacy.url] : [apiUrl];
}

/**
 * What /readyz asks Manage2 and CLN, when configured: the cheapest read each has that needs its
 * credentials and changes nothing. Manage2: its licence groups (XMLgroupInfo, a few rows); CLN:
 * the licence types held on a documentation address (`check`, which no customer's server has).
 */
function providerProbes(providers: ProviderConnections): ProviderProbe[] {
  const probes: ProviderProbe[] = [];
  const { manage2, cln } = providers;
  if (manage2) probes.push({ name: "manage2", label: PROVIDER_TITLES.manage2, asks: "XMLgroupInfo", read: () => manage2.client.groupInfo() });
  if (cln) probes.push({ name: "cln", label: PROVIDER_TITLES.cln, asks: `check of ${READINESS_IP}`, read: () => cln.client.check({ ip: READINESS_IP }) });
  return probes;
}

/** An address of TEST-NET-1 (RFC 5737): never a customer's server, so CLN's answer about it is always "none". */
const READINESS_IP = "192.0.2.1";

/**
 * The HTTP surface for the configuration the service starts with, listening. What outlives a
 * reload is made here once (the failure limit, the install commands' cache, draining); what a
 * configuration decides (tokens, secrets, catalogue, TRUST_PROXY, provisioning) in `appFor`.
 */
export async function serveHttp(core: Core, background: Background, options: ServiceOptions, opened: Opened): Promise<HttpSurface> {
  const { store, reseller, metrics, clock, logger, waiter, lost } = core;
  // Reconcile and adoption read each configured provider's list: the reseller's through its Upstream, the others' through the port.
  const lists = { upstream: core.upstream, providers: core.lifecycle.providers };
  const { balance } = background;
  const config = core.started;

  // Set by `drain`. A lost database needs no check of its own here: the store refuses every
  // write, whichever way it came.
  let draining = false;
  const unavailable = () =>
    draining ? { message: "the service is shutting down; send it again (another instance, or this one once restarted, takes it)", retryAfterSeconds: 5 } : undefined;

  // The providers' connections live as long as the core: their probes are made once.
  const probes = providerProbes(core.providers);

  // Install commands for the panels' client areas: from each service's provider, within WORKER_CONCURRENCY, as the install mail reads them.
  const installCommands = cachedInstallCommands(core.lifecycle.providers, clock);
  /** The provisioning API of one configuration: it translates, the intake decides, it waits. */
  const provisioningOf = (cfg: Config, accept: Intake) => {
    const license = licenseAnswerer({ catalog: cfg.catalog, installCommands, logger: logger.child({ component: "provisioning" }) });
    const outcome = outcomeWaiter({ services: store.services, jobs: store.jobs, waiter, waitMs: cfg.PROVISION_WAIT_SECONDS * 1000, now: () => Date.now(), license });
    return createProvisioning({ accept, services: store.services, jobs: store.jobs, outcome, license });
  };

  /** Who each token belongs to under a configuration: ADMIN_TOKEN's admin and OPERATORS_FILE's operators. */
  const directoryOf = (cfg: Config): OperatorDirectory => operatorDirectory(cfg.ADMIN_TOKEN, cfg.operators);
  /** Who logs in to the console (a test may give it operators of its own). */
  const consoleDirectoryOf = (cfg: Config): OperatorDirectory => options.consoleOperators?.(cfg) ?? directoryOf(cfg);
  // Failed console logins and admin API tokens, counted together per client (one guesser, one
  // count); they outlive a reload: a new router must not forget a guesser. The provisioning
  // API's token is left out: its client is the panel, whose lock-out would stop orders.
  const tokenFailures = failureLimit({ clock });

  /** The HTTP surface for one configuration: rebuilt on SIGHUP, so tokens, secrets and the catalogue change without a restart. */
  const appFor = (cfg: Config): Express => {
    // ADMIN_TOKEN (the admin named "admin") and OPERATORS_FILE, as this configuration has them.
    const access = { operators: directoryOf(cfg), failures: tokenFailures, audit: store.audit, services: store.services };
    const accept = guardAccept(createIntake({ store, catalog: cfg.catalog, allowPrivateIps: cfg.ALLOW_PRIVATE_IPS }), unavailable);
    // Every change an operator makes, whether through the admin API or the console.
    const actions = adminActions({ store, accept, reconcile: { store, ...lists }, logger: logger.child({ component: "reconcile" }) });
    const forecast = background.forecastOf(cfg);
    // The admin API's adoption and the console's page: one plan, one set of prices, one intake.
    const adoption: AdoptionDeps = { store, ...lists, catalog: cfg.catalog, prices: pricesOf(cfg), allowPrivateIps: cfg.ALLOW_PRIVATE_IPS, intake: accept };
    return createApp({
      logger: logger.child({ component: "http" }),
      isBusy: (err) => store.isBusy(err),
      secrets: secretValues(cfg),
      // The operators' tokens are known only by their SHA-256: found in a path by hashing.
      secretDigests: cfg.operators.map((o) => o.token_sha256),
      trustProxy: cfg.TRUST_PROXY,
      routers: [
        healthRouter({
          store,
          metrics,
          upstreamUrls: upstreamUrls(cfg, reseller),
          ...(reseller ? {} : { noUpstream: NO_RESELLER }),
          providers: probes,
          databaseLost: lost,
          draining: () => draining,
          smtp: smtpAddressOf(cfg),
        }),
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
        reconcileRouter({ operators: access.operators, failures: tokenFailures, store, ...lists, logger: logger.child({ component: "reconcile" }) }),
        adoptRouter({ ...adoption, operators: access.operators, failures: tokenFailures, logger: logger.child({ component: "adopt" }) }),
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
                admin: adminFunctions({ store, forecast, adoption }),
                clock,
                logger: logger.child({ component: "console" }),
              }),
            ]
          : []),
      ],
    });
  };
  let app = appFor(config);
  if (!config.PROVISIONING_TOKEN) {
    logger.warn("PROVISIONING_TOKEN is not set: the provisioning API (/provision/v1, what the panel modules call) is off and answers 404 provisioning_off");
  }

  // The listener asks for the app of the moment: a reload swaps it for requests not yet begun.
  const server: Server = await listen((req, res) => app(req, res), config.PORT, config.HOST);
  opened.push(() => new Promise<void>((r) => server.close(() => r())));
  const address = server.address();
  const url = `http://${hostPort(config.HOST, typeof address === "object" && address ? address.port : config.PORT)}`;

  /** An operator removed, demoted, promoted or given new tokens by a reload: their console sessions end (log in again). */
  const endChangedSessions = (was: OperatorDirectory, now: OperatorDirectory) => {
    for (const name of was.names().filter((n) => was.credentialOf(n) !== now.credentialOf(n))) {
      store.sessions.deleteFor(name).catch((err: unknown) => logger.warn({ err, operator: name }, "could not end the console sessions of an operator the reload changed"));
    }
  };

  return {
    url,
    get app() {
      return app;
    },
    appFor,
    replace(was, next, nextApp) {
      endChangedSessions(consoleDirectoryOf(was), consoleDirectoryOf(next));
      app = nextApp;
    },
    drain() {
      draining = true;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
