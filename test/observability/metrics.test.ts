import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import type { Job } from "../../src/vocabulary/jobs.js";
import { silentLogger } from "../../src/log/logger.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { createV1Client } from "../../src/reseller/v1.js";
import { observeUpstream, startService } from "../../src/compose/service.js";
import { bridgeEnv, createdEvent, startTestBridge } from "../helpers/bridge.js";
import { usePair, usePairPerFile } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { orderActiveOf, useProviderBridges } from "../helpers/providers.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";

/** The value of one sample of the Prometheus text, 0 when the series does not exist yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

describe("/metrics", () => {
  it("counts renewal jobs by how they ended, and mail attempts by kind", async () => {
    const metrics = createMetrics();
    const job = (kind: string) => ({ kind }) as Job;
    metrics.jobs.attemptFinished(job("renew"), "retry", 10);
    metrics.jobs.attemptFinished(job("renew"), "succeeded", 10);
    metrics.jobs.attemptFinished(job("renew"), "blocked", 10);
    metrics.jobs.attemptFinished(job("alert_mail"), "retry", 10);
    metrics.jobs.attemptFinished(job("register"), "succeeded", 10);
    const text = await metrics.scrape();
    expect(sample(text, "license_bridge_renewals_total", { outcome: "succeeded" })).toBe(1);
    expect(sample(text, "license_bridge_renewals_total", { outcome: "blocked" })).toBe(1);
    expect(sample(text, "license_bridge_renewals_total", { outcome: "retry" })).toBe(0);
    expect(sample(text, "license_bridge_mails_total", { kind: "alert_mail", outcome: "retry" })).toBe(1);
    expect(text).not.toMatch(/license_bridge_mails_total\{[^}]*kind="register"/);
  });

  describe("on a sandbox and bridge the file's tests share", () => {
    const pair = usePairPerFile();

    it("is Prometheus text, every name prefixed license_bridge_", async () => {
      const { bridge } = pair();
      const res = await fetch(`${bridge.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      const names = text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => (l.startsWith("# ") ? l.split(" ")[2]! : l.split(/[{ ]/)[0]!));
      expect(names.length).toBeGreaterThan(20);
      for (const name of names) expect(name).toMatch(/^license_bridge_/);
      for (const name of ["webhooks_total", "jobs", "job_duration_seconds", "job_attempts_total", "upstream_calls_total", "upstream_call_duration_seconds", "renewals_total", "mails_total", "alerts_open", "queue_depth", "queue_oldest_due_seconds"]) {
        expect(text).toContain(`# TYPE license_bridge_${name} `);
      }
    });

    it("counts the calls of reseller clients a caller passes in, built with observeUpstream and the same metrics", async () => {
      const { sb } = pair();
      const dir = mkdtempSync(join(tmpdir(), "lb-metrics-"));
      const metrics = createMetrics();
      const v1 = createV1Client({
        baseUrl: sb.running.apiUrl,
        token: DEFAULT_SANDBOX_TOKENS.reseller,
        observer: observeUpstream(silentLogger(), metrics),
      });
      const service = await startService({
        config: loadConfig({ env: bridgeEnv(sb.running, dir), cwd: process.cwd() }),
        logger: silentLogger(),
        reseller: { v1, v2: null, sandbox: null, close: async () => {} },
        metrics,
        renewalSchedule: false,
      });
      try {
        expect(service.metrics).toBe(metrics);
        await service.reseller.v1.listLicenses();
        const text = await (await fetch(`${service.url}/metrics`)).text();
        expect(sample(text, "license_bridge_upstream_calls_total", { operation: "v1.listLicenses", outcome: "ok" })).toBe(1);
      } finally {
        await service.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe("counted from zero, on a bridge per test", () => {
    // Each reads absolute values (a counter or histogram at exactly 1, every job state and the
    // open alerts at 0, the queue's depth), which hold only on a bridge whose registry and
    // database nothing else has touched; one also empties the sandbox's balance.
    const pair = usePair();
    const scrape = async () => (await fetch(`${pair().bridge.url}/metrics`)).text();

    it("the queue gauges show the jobs queued and how long the oldest due one has waited", async () => {
      const { bridge } = pair();
      const idle = await scrape();
      expect(sample(idle, "license_bridge_queue_depth", {})).toBe(0);
      expect(sample(idle, "license_bridge_queue_oldest_due_seconds", {})).toBe(0);
      // A job queued for an hour from now: in the depth, not yet due.
      await bridge.service.queue.enqueue({ kind: "renew", queueKey: "svc:later", delayMs: 3_600_000 });
      const later = await scrape();
      expect(sample(later, "license_bridge_queue_depth", {})).toBe(1);
      expect(sample(later, "license_bridge_queue_oldest_due_seconds", {})).toBe(0);
      expect(sample(later, "license_bridge_jobs", { state: "queued" })).toBe(1);
    });

    it("a service.created moves the webhook, job and upstream counters by one", async () => {
      const { bridge } = pair();
      const before = await scrape();
      const webhook = { source: "billing", type: "service.created", outcome: "accepted" };
      const register = { kind: "register", outcome: "succeeded" };
      const upstreamRegister = { operation: "v1.register", outcome: "ok" };

      expect((await bridge.send(createdEvent({ id: "m-1" }))).status).toBe(202);
      const after = await waitFor(async () => {
        const text = await scrape();
        return sample(text, "license_bridge_job_attempts_total", register) > sample(before, "license_bridge_job_attempts_total", register) && text;
      });

      expect(sample(after, "license_bridge_webhooks_total", webhook) - sample(before, "license_bridge_webhooks_total", webhook)).toBe(1);
      expect(sample(after, "license_bridge_job_attempts_total", register) - sample(before, "license_bridge_job_attempts_total", register)).toBe(1);
      expect(sample(after, "license_bridge_upstream_calls_total", upstreamRegister) - sample(before, "license_bridge_upstream_calls_total", upstreamRegister)).toBe(1);
      expect(sample(after, "license_bridge_upstream_call_duration_seconds_count", { operation: "v1.register" })).toBe(1);
      expect(sample(after, "license_bridge_job_duration_seconds_count", register)).toBe(1);

      const mailed = await waitFor(async () => {
        const text = await scrape();
        return sample(text, "license_bridge_mails_total", { kind: "mail_install", outcome: "succeeded" }) === 1 && text;
      });
      expect(sample(mailed, "license_bridge_upstream_calls_total", { operation: "v1.installCommand", outcome: "ok" })).toBe(1);
    });

    it("reads the queue and the open alerts when scraped", async () => {
      const { bridge } = pair();
      const text = await scrape();
      for (const state of ["queued", "running", "succeeded", "failed", "blocked", "cancelled"]) {
        expect(text).toMatch(new RegExp(`^license_bridge_jobs\\{state="${state}"\\} 0$`, "m"));
      }
      expect(sample(text, "license_bridge_alerts_open")).toBe(0);
      await bridge.service.alerts.raise("test:alert", "a test alert", "raised by the metrics test");
      expect(sample(await scrape(), "license_bridge_alerts_open")).toBe(1);
    });

    it("counts a failed upstream call under its error kind", async () => {
      const { sb, bridge } = pair();
      sb.sandbox.setBalance(0);
      await bridge.send(createdEvent({ id: "m-2" }));
      // The call is counted as it returns, the job's attempt once its ending is committed: a scrape
      // between the two sees the first alone, so the wait is for the attempt.
      const text = await waitFor(async () => {
        const t = await scrape();
        return sample(t, "license_bridge_job_attempts_total", { kind: "register", outcome: "blocked" }) === 1 && t;
      });
      expect(sample(text, "license_bridge_upstream_calls_total", { operation: "v1.register", outcome: "insufficient_balance" })).toBe(1);
    });

    it("two services in one process keep their own registries", async () => {
      const { sb, bridge } = pair();
      const second = await startTestBridge(sb);
      try {
        await bridge.send(createdEvent({ id: "m-3" }));
        const mine = await scrape();
        const theirs = await (await fetch(`${second.url}/metrics`)).text();
        const webhook = { source: "billing", type: "service.created", outcome: "accepted" };
        expect(sample(mine, "license_bridge_webhooks_total", webhook)).toBe(1);
        expect(sample(theirs, "license_bridge_webhooks_total", webhook)).toBe(0);
      } finally {
        await second.close();
      }
    });
  });
});

/** Every sample of `name` whose labels include `labels`, summed (0 when there is none). */
function total(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

describe("/metrics with the reseller, Manage2 and CLN", () => {
  const start = useProviderBridges();

  it("labels each provider's calls with its provider under the same series, errors included", async () => {
    const { sbs, bridge } = await start();
    await orderActiveOf(bridge, "12", "203.0.113.150");
    await orderActiveOf(bridge, "40", "203.0.113.151");
    await orderActiveOf(bridge, "41", "203.0.113.152");
    sbs.cln.failNextRegister("this IP is not allowed");
    await bridge.send(createdEvent({ product_id: "42", ip: "203.0.113.153" }));
    const refused = { provider: "cln", operation: "cln.register" };
    const text = await waitFor(async () => {
      const t = await (await fetch(`${bridge.url}/metrics`)).text();
      return total(t, "license_bridge_upstream_calls_total", refused) > total(t, "license_bridge_upstream_calls_total", { ...refused, outcome: "ok" }) && t;
    });

    expect(sample(text, "license_bridge_upstream_calls_total", { provider: "reseller", operation: "v1.register", outcome: "ok" })).toBe(1);
    expect(sample(text, "license_bridge_upstream_calls_total", { provider: "manage2", operation: "manage2.XMLlicenseAdd", outcome: "ok" })).toBe(1);
    expect(sample(text, "license_bridge_upstream_calls_total", { provider: "cln", operation: "cln.register", outcome: "ok" })).toBe(1);
    expect(sample(text, "license_bridge_upstream_call_duration_seconds_count", { provider: "manage2", operation: "manage2.XMLlicenseAdd" })).toBe(1);
    // No provider's call is counted under another's name.
    expect(total(text, "license_bridge_upstream_calls_total", { provider: "reseller", operation: "cln.register" })).toBe(0);
    expect(text).not.toMatch(/^license_bridge_upstream_calls_total\{operation=/m);
  });
});

describe("the reseller balance gauges", () => {
  const lines = async (metrics: ReturnType<typeof createMetrics>) =>
    (await metrics.scrape()).split("\n").filter((l) => l.startsWith("license_bridge_reseller_balance"));

  it("report the source's reading; unknown is no sample (never a 0), while a real 0 is reported", async () => {
    const metrics = createMetrics();
    expect(await lines(metrics)).toEqual([]);
    metrics.track({ resellerBalance: async () => ({ balance: null, checkedAt: null }) });
    expect(await lines(metrics)).toEqual([]);
    metrics.track({ resellerBalance: async () => ({ balance: null, checkedAt: 1 }) });
    expect(await lines(metrics)).toEqual(["license_bridge_reseller_balance_up 0"]);
    metrics.track({ resellerBalance: async () => ({ balance: 0, checkedAt: 1 }) });
    expect(await lines(metrics)).toEqual(["license_bridge_reseller_balance 0", "license_bridge_reseller_balance_up 1"]);
    metrics.track({ resellerBalance: async () => ({ balance: 812.4, checkedAt: 1 }) });
    expect(await lines(metrics)).toEqual(["license_bridge_reseller_balance 812.4", "license_bridge_reseller_balance_up 1"]);
  });

  it("a source that throws leaves them without samples and the rest of the scrape intact", async () => {
    const metrics = createMetrics();
    metrics.track({ jobCounts: () => ({ queued: 2 }), resellerBalance: () => Promise.reject(new Error("boom")) });
    const text = await metrics.scrape();
    expect(await lines(metrics)).toEqual([]);
    expect(sample(text, "license_bridge_jobs", { state: "queued" })).toBe(2);
  });
});
