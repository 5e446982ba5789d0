import { connect } from "node:net";
import express, { type Response, type Router } from "express";
import { bareUrl, withoutUrlCredentials } from "../log/url-credentials.js";
import type { Metrics } from "../observability/metrics.js";
import { ResellerError } from "../reseller/errors.js";
import type { Store } from "../store/store.js";
import type { ProviderName } from "../vocabulary/provider-names.js";

/**
 * A provider /readyz asks with a read of its own API (Manage2 and CLN): the bridge's credentials
 * go with it, since these APIs answer nothing without them, and nothing is bought or changed.
 */
export interface ProviderProbe {
  name: Exclude<ProviderName, "reseller">;
  /** How the reasons name it ("cPanel Manage2"). */
  label: string;
  /** What the read asks, for the check's detail ("XMLgroupInfo"). */
  asks: string;
  read(): Promise<unknown>;
}

export interface HealthRouteDeps {
  store: Store;
  metrics: Metrics;
  /**
   * Base URLs /readyz must reach (the v1 API, and the legacy one when it provisions). Any HTTP
   * answer, even 401 or 404, counts as reachable; no token is sent, so nothing is spent or logged.
   */
  upstreamUrls: readonly string[];
  /** Why `upstreamUrls` is empty, for the check's detail (no reseller is configured). (Default: "no upstream URL configured") */
  noUpstream?: string;
  /** Manage2 and CLN, when configured: each must answer its read. (Default: none) */
  providers?: readonly ProviderProbe[];
  /** How long /readyz waits for the upstream. (Default: 2000 ms) */
  upstreamTimeoutMs?: number;
  /** Why the database file is no longer the one the service has open, if it is not. (Default: never) */
  databaseLost?: () => string | undefined;
  /** The service is shutting down: /readyz answers 503 from its first moment. (Default: never) */
  draining?: () => boolean;
  /** The SMTP server mail goes to, checked for reachability (a TCP connection) as a degradation, not a failure. (Default: the file outbox, nothing to check) */
  smtp?: { host: string; port: number };
}

export interface CheckResult {
  status: "ok" | "failed" | "degraded";
  /** Why it failed, or what was checked. */
  detail?: string;
  [extra: string]: unknown;
}

/** The reseller's check is `upstream` (its URLs, as before there were providers); Manage2's and CLN's are under their names. */
export type ReadinessChecks = Record<"database" | "migrations" | "upstream", CheckResult> & Partial<Record<ProviderProbe["name"], CheckResult>>;

const DEFAULT_UPSTREAM_TIMEOUT_MS = 2_000;

/** The database accepts a write now (the store takes the write lock briefly and rolls back). */
export async function checkDatabase(store: Store): Promise<CheckResult> {
  try {
    const problem = await store.health.writable();
    return problem ? { status: "failed", detail: problem } : { status: "ok" };
  } catch (err) {
    return { status: "failed", detail: `not writable: ${(err as Error).message}` };
  }
}

/** The database is at the code's migration: neither behind (pending) nor ahead (a newer release ran). */
export async function checkMigrations(store: Store): Promise<CheckResult> {
  try {
    const s = await store.migrationStatus();
    const versions = { database_version: s.databaseVersion, code_version: s.codeVersion };
    if (s.databaseVersion > s.codeVersion) {
      return { status: "failed", detail: `the database is at migration ${s.databaseVersion}, newer than this code (${s.codeVersion})`, ...versions };
    }
    if (s.pending.length) {
      const names = s.pending.map((m) => `${m.id}_${m.name}`).join(", ");
      return { status: "failed", detail: `pending migrations: ${names}; run \`license-bridge migrate\``, ...versions };
    }
    return { status: "ok", ...versions };
  } catch (err) {
    return { status: "failed", detail: `cannot read the migration table: ${(err as Error).message}` };
  }
}

/** Where an URL points, without credentials, query or fragment: safe to show. */
const describeUrl = (url: string): string => bareUrl(url) ?? "(invalid URL)";

function networkCode(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const { code, name } = current as { code?: unknown; name?: unknown };
    if (name === "TimeoutError") return "timed out";
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  // A message may quote the URL (fetch's does when it refuses one with credentials).
  return withoutUrlCredentials(err instanceof Error ? err.message : String(err));
}

/**
 * Each URL answers something within the timeout; only a network error or a timeout fails. Asked
 * without the URL's userinfo and query: reaching it needs no credentials (and fetch refuses a URL
 * that carries them).
 */
export async function checkUpstream(urls: readonly string[], timeoutMs: number, none = "no upstream URL configured"): Promise<CheckResult> {
  if (urls.length === 0) return { status: "ok", detail: none };
  const failures: string[] = [];
  await Promise.all(
    urls.map(async (url) => {
      try {
        const res = await fetch(bareUrl(url) ?? url, { method: "GET", redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
        await res.body?.cancel().catch(() => {});
      } catch (err) {
        failures.push(`${describeUrl(url)} unreachable (${networkCode(err)})`);
      }
    }),
  );
  const checked = urls.map(describeUrl);
  return failures.length ? { status: "failed", detail: failures.join("; "), urls: checked } : { status: "ok", urls: checked };
}

/** The kinds of refusal that are the provider's own answer: it is reachable, it only will not do this for these credentials. */
const ANSWERED: readonly string[] = ["unauthorized", "forbidden", "validation", "not_found", "already_exists", "insufficient_balance"];

/**
 * The provider answers its read within the timeout. No answer (a network error, a timeout, a 5xx,
 * an answer it could not read) fails the check: its licences cannot be bought or changed now. An
 * answer that refuses the credentials or the call is reachable, and `degraded`: the jobs of its
 * licences will block until the operator fixes the settings, but the bridge still takes orders
 * (as a reseller that answers 401 is reachable). The details come from the client's errors, which
 * never carry a credential; the URL is shown without its userinfo and query.
 */
export async function checkProvider(probe: ProviderProbe, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error("timed out"), { name: "TimeoutError" })), timeoutMs);
  });
  try {
    await Promise.race([probe.read(), timedOut]);
    return { status: "ok", detail: `${probe.label} answered ${probe.asks}` };
  } catch (err) {
    if (err instanceof ResellerError && ANSWERED.includes(err.kind)) {
      return { status: "degraded", detail: `${probe.label} answered but refused ${probe.asks}: ${withoutUrlCredentials(err.message)}; its licences' jobs will block until its settings are fixed` };
    }
    const why = err instanceof ResellerError ? withoutUrlCredentials(err.message) : networkCode(err);
    return { status: "failed", detail: `${probe.label} unreachable (${why})` };
  } finally {
    clearTimeout(timer);
  }
}

/** The SMTP server accepts a TCP connection within the timeout; nothing is sent or authenticated. */
export function checkSmtp(server: { host: string; port: number }, timeoutMs: number): Promise<CheckResult> {
  const where = `${server.host.includes(":") ? `[${server.host}]` : server.host}:${server.port}`;
  return new Promise((resolve) => {
    const socket = connect({ host: server.host, port: server.port });
    const done = (r: CheckResult) => {
      socket.destroy();
      resolve(r);
    };
    socket.setTimeout(timeoutMs, () => done({ status: "degraded", detail: `${where} did not answer within ${timeoutMs} ms; customer mail waits and retries` }));
    socket.once("connect", () => done({ status: "ok", detail: where }));
    socket.once("error", (err: NodeJS.ErrnoException) => done({ status: "degraded", detail: `${where} unreachable (${err.code ?? err.message}); customer mail waits and retries` }));
  });
}

function noStore(res: Response): Response {
  return res.setHeader("Cache-Control", "no-store");
}

/**
 * `GET /healthz` (the process answers), `GET /readyz` (database writable, migrations current,
 * the reseller and every other configured provider reachable; 503 with reasons otherwise) and
 * `GET /metrics` (Prometheus text).
 * No authentication: mount them before anything that requires it.
 */
export function healthRouter(deps: HealthRouteDeps): Router {
  const router = express.Router();
  const timeoutMs = deps.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  // Probes arriving together share one upstream check instead of each opening a connection.
  let upstreamInFlight: Promise<CheckResult> | undefined;
  const upstream = () =>
    (upstreamInFlight ??= checkUpstream(deps.upstreamUrls, timeoutMs, deps.noUpstream).finally(() => {
      upstreamInFlight = undefined;
    }));
  // The same for each provider's read: probes arriving together make one call per provider.
  const providerInFlight = new Map<string, Promise<CheckResult>>();
  const provider = (probe: ProviderProbe) => {
    let pending = providerInFlight.get(probe.name);
    if (!pending) {
      pending = checkProvider(probe, timeoutMs).finally(() => providerInFlight.delete(probe.name));
      providerInFlight.set(probe.name, pending);
    }
    return pending;
  };

  router.get("/healthz", (_req, res) => {
    noStore(res).json({ status: "ok" });
  });

  router.get("/readyz", async (_req, res) => {
    if (deps.draining?.()) {
      return noStore(res).status(503).json({ status: "draining", reasons: ["the service is shutting down: send work to another instance"] });
    }
    const pendingUpstream = upstream();
    const pendingProviders = (deps.providers ?? []).map((p) => provider(p).then((c) => [p.name, c] as const));
    const pendingSmtp = deps.smtp ? checkSmtp(deps.smtp, timeoutMs) : undefined;
    const lost = deps.databaseLost?.();
    const checks: ReadinessChecks = {
      database: lost ? { status: "failed", detail: lost } : await checkDatabase(deps.store),
      migrations: await checkMigrations(deps.store),
      upstream: await pendingUpstream,
      ...Object.fromEntries(await Promise.all(pendingProviders)),
    };
    const named = (entries: [string, CheckResult][], status: CheckResult["status"]) => entries.filter(([, c]) => c.status === status).map(([name, c]) => `${name}: ${c.detail ?? status}`);
    const reasons = named(Object.entries(checks), "failed");
    // Mail can wait (its jobs retry): an SMTP server out of reach degrades the service, it does
    // not take it out of rotation; nor does a provider that answers but refuses the credentials.
    const smtp = await pendingSmtp;
    const all = smtp ? { ...checks, smtp } : checks;
    const degraded = named(Object.entries(all), "degraded");
    if (reasons.length) return noStore(res).status(503).json({ status: "not ready", reasons, checks: all });
    if (degraded.length) return noStore(res).json({ status: "ready", degraded, checks: all });
    noStore(res).json({ status: "ready", checks: all });
  });

  router.get("/metrics", async (_req, res) => {
    const text = await deps.metrics.scrape();
    noStore(res).setHeader("Content-Type", deps.metrics.contentType);
    res.send(text);
  });

  return router;
}
