import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { signWebhook } from "../../src/webhooks/signature.js";
import { createdEvent, idle, serviceEvent, uniqueId } from "../helpers/bridge.js";
import { usePairPerFile, type Pair } from "../helpers/e2e-harness.js";
import { rawRequest } from "../helpers/raw-http.js";
import { startMailBridge, startTestSmtp, type TestSmtp } from "../helpers/smtp.js";
import { waitFor } from "../helpers/wait.js";

const hex = (n: number) => randomBytes(n).toString("hex");

/** Fresh secrets, so a hit can only come from this run. */
const SECRETS = {
  resellerToken: `v1tok-${hex(16)}`,
  legacyToken: `v2tok-${hex(16)}`,
  adminToken: `admin-${hex(16)}`,
  webhookSecret: `whsec_${randomBytes(32).toString("base64")}`,
  // Characters that URL-encoding changes, so the encoded form is checked too.
  smtpPassword: `pw/${hex(12)}+${hex(4)}`,
  // Blesta signs nothing: the token is the last segment of the webhook's path.
  blestaToken: `blesta-${hex(24)}`,
};

/** Every character as %XX (upper-case hex): what a client that over-encodes sends. */
const encoded = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`).join("");

/**
 * Request-targets that carry the Blesta token, as a panel, a base URL with a trailing slash,
 * a proxy or a careless client may spell them. The first two reach the route; the others
 * answer 404 (or 400) but were logged with the token once.
 */
function blestaSpellings(token: string, host: string): { method: string; target: string }[] {
  const targets = [
    `/webhooks/blesta/${token}`,
    `/WebHooks/BLESTA/${token}`,
    `//webhooks/blesta/${token}`,
    `/webhooks/./blesta/${token}`,
    `/webhooks%2fblesta/${token}`,
    `/webhooks%2Fblesta/${token}`,
    `/webhooks/blesta/../blesta/${token}`,
    `/webhooks/blesta/%2e%2e/blesta/${token}`,
    `/webhooks/blesta/${token}/..`,
    `/webhooks/blesta//${token}`,
    `/webhooks\\blesta\\${token}`,
    `/webhooks/blesta/${token};jsessionid=1`,
    `/webhooks/blesta;v=1/${token}`,
    `/webhooks/%62lesta/${token}`,
    `/webhooks/blesta/${encoded(token)}`,
    `/webhooks/blesta/${token.toUpperCase()}`,
    `/webhooks/blesta%2f${token}`,
    `/webhooks/blesta/${token}%`,
    `/webhooks/blesta/${token}/`,
    `/webhooks/blesta/${token}/extra`,
    `/webhooks/blesta/${token}#fragment`,
    `/webhooks/blesta/${token}?event=services.addAfter`,
    `/bridge/webhooks/blesta/${token}`,
    `/${token}`,
    `/admin/services/${token}`,
    `http://${host}/webhooks/blesta/${token}`,
    `HTTP://${host}//webhooks/blesta/${token}`,
    `http://user:${token}@${host}/webhooks/billing`,
  ];
  return [...targets.map((target) => ({ method: "POST", target })), { method: "GET", target: `//webhooks/blesta/${token}` }];
}

/** Every 12 characters of `secret`, lower-cased: a log line must hold none of them, in any letter case. */
const pieces = (secret: string) => Array.from({ length: secret.length - 11 }, (_, i) => secret.slice(i, i + 12).toLowerCase());

/** Sum of every sample of a counter in the Prometheus text. */
function total(text: string, name: string): number {
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

describe("secrets stay out of logs and the database, through a whole flow", () => {
  let smtp: TestSmtp;
  const chunks: string[] = [];
  const signatures: string[] = [];
  let requests = 0;
  let log = "";
  let lines: Record<string, unknown>[] = [];
  let metricsText = "";
  /** The bridge's answers to the Blesta spellings, status line to body. */
  const blestaAnswers: { target: string; status: number; text: string }[] = [];

  async function request(path: string, init: RequestInit = {}): Promise<Response> {
    requests++;
    return fetch(`${pair().bridge.url}${path}`, init);
  }

  async function post(event: unknown, options: { secret?: string; signature?: string } = {}): Promise<number> {
    const body = JSON.stringify(event);
    const headers = signWebhook(options.secret ?? SECRETS.webhookSecret, uniqueId(), body);
    const signature = options.signature ?? headers["webhook-signature"];
    signatures.push(signature);
    const res = await request("/webhooks/billing", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers, "webhook-signature": signature },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  }

  async function admin(path: string, token = SECRETS.adminToken): Promise<number> {
    const res = await request(path, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    return res.status;
  }

  const status = async (id: string) => (await pair().bridge.service.services.get(id))?.status;

  // The mail server first: the bridge is started with its URL, and closed before it.
  beforeAll(async () => {
    smtp = await startTestSmtp({ auth: { user: "bridge", pass: SECRETS.smtpPassword } });
  });
  afterAll(async () => {
    await smtp?.close();
  });

  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const pair = usePairPerFile({
    sandbox: { tokens: { reseller: SECRETS.resellerToken, legacy: SECRETS.legacyToken } },
    bridge: (sb) =>
      startMailBridge(sb, {
        env: {
          RESELLER_API_TOKEN: SECRETS.resellerToken,
          RESELLER_LEGACY_TOKEN: SECRETS.legacyToken,
          ADMIN_TOKEN: SECRETS.adminToken,
          WEBHOOK_SECRETS: SECRETS.webhookSecret,
          SMTP_URL: smtp.url,
          BLESTA_WEBHOOK_TOKEN: SECRETS.blestaToken,
          LOG_LEVEL: "trace",
        },
        tls: { rejectUnauthorized: false },
        logger: createLogger({ level: "trace", destination, pretty: false }),
      }),
    setup: runTheFlow,
    timeoutMs: 60_000,
  });

  /** The whole flow, once: every test below reads what it left in the logs, the database and the metrics. */
  async function runTheFlow({ sb, bridge }: Pair): Promise<void> {
    // Created: registered upstream, install command fetched and mailed over SMTP with AUTH.
    expect(await post(createdEvent({ id: "sec-1" }))).toBe(202);
    await waitFor(() => smtp.messages.length === 1, 15_000, "the install mail");
    // Suspended.
    expect(await post(serviceEvent("service.suspended", "sec-1"))).toBe(202);
    await waitFor(async () => await status("sec-1") === "suspended", 10_000, "the suspension");
    // An upstream error: the unsuspend gets a 500 first, then goes through on its retry.
    sb.sandbox.setFaults({ failNext: 1 });
    expect(await post(serviceEvent("service.unsuspended", "sec-1"))).toBe(202);
    await waitFor(async () => await status("sec-1") === "active", 10_000, "the unsuspension");
    // Bad signatures: made up, and signed with another secret.
    expect(await post(serviceEvent("service.suspended", "sec-1"), { signature: `v1,${randomBytes(32).toString("base64")}` })).toBe(401);
    expect(await post(serviceEvent("service.suspended", "sec-1"), { secret: `whsec_${randomBytes(32).toString("base64")}` })).toBe(401);
    // The admin API, with and without the token; readiness and metrics.
    expect(await admin("/admin/services/sec-1")).toBe(200);
    expect(await admin("/admin/jobs?service_id=sec-1")).toBe(200);
    expect(await admin("/admin/licenses", "wrong-token")).toBe(401);
    expect((await request("/readyz")).status).toBe(200);
    expect((await request("/metrics")).status).toBe(200);
    // The legacy client, whose token travels in the query string: one success, one upstream error.
    // The Blesta token in every spelling of its path, over a plain socket so each arrives as written.
    for (const { method, target } of blestaSpellings(SECRETS.blestaToken, new URL(bridge.url).host)) {
      requests++;
      const answer = await rawRequest(bridge.url, target, { method, headers: { "content-type": "application/json" }, body: "{}" });
      blestaAnswers.push({ target, ...answer });
    }
    await bridge.service.reseller.v2!.register({ ip: "198.51.100.7", type: "cpanel", billingcycle: 1 });
    await expect(bridge.service.reseller.v2!.changeIp({ ip: "198.51.100.99", type: "cpanel", newip: "198.51.100.98" })).rejects.toThrow();

    await waitFor(() => idle(bridge.service), 10_000, "an idle queue");
    metricsText = await bridge.service.metrics.scrape();
    // Request lines are written when the response finishes; give the last ones a moment.
    await waitFor(() => chunks.join("").split("\n").filter((l) => l.includes('"msg":"request"')).length === requests, 5_000, "request lines");
    log = chunks.join("");
    lines = log
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Every form a secret could be written in. */
  function forms(): [string, string][] {
    const out: [string, string][] = [];
    for (const [name, value] of Object.entries(SECRETS)) {
      out.push([name, value]);
      if (encodeURIComponent(value) !== value) out.push([`${name} (URL-encoded)`, encodeURIComponent(value)]);
    }
    const body = SECRETS.webhookSecret.slice("whsec_".length);
    out.push(["webhook secret (base64 body)", body], ["webhook secret (base64 body, URL-encoded)", encodeURIComponent(body)]);
    out.push(["webhook secret (key, hex)", Buffer.from(body, "base64").toString("hex")]);
    for (const header of signatures) {
      out.push(["webhook-signature", header]);
      for (const entry of header.split(" ")) out.push(["webhook-signature (base64)", entry.slice(entry.indexOf(",") + 1)]);
    }
    return out;
  }

  it("the flow was logged at trace level, reseller calls included", () => {
    expect(lines.some((l) => l.msg === "reseller call" && l.level === 20)).toBe(true);
    expect(lines.some((l) => l.msg === "reseller call" && Number(l.status) >= 500)).toBe(true);
    expect(lines.some((l) => l.msg === "upstream call" && l.operation === "v2.register")).toBe(true);
    expect(smtp.messages[0]!.user).toBe("bridge");
  });

  it("no secret and no webhook signature is in the log", () => {
    for (const [name, value] of forms()) expect(log.includes(value), `${name} is in the log`).toBe(false);
  });

  it("no 12 characters of the Blesta token are in the log or an answer, whatever the spelling of its path", () => {
    // The route answered the spellings that reach it: the token was the right one.
    expect(blestaAnswers.find((a) => a.target === `/WebHooks/BLESTA/${SECRETS.blestaToken}`)?.status).toBe(422);
    expect(blestaAnswers.find((a) => a.target.startsWith("//"))?.status).toBe(404);
    expect(lines.some((l) => l.msg === "request" && l.path === "//webhooks/blesta/[token]" && l.status === 404)).toBe(true);
    const logged = log.toLowerCase();
    for (const piece of pieces(SECRETS.blestaToken)) {
      expect(logged.includes(piece), `"${piece}" of the Blesta token is in the log`).toBe(false);
      for (const a of blestaAnswers) expect(a.text.toLowerCase().includes(piece), `the answer to ${a.target} holds "${piece}"`).toBe(false);
    }
  });

  it("no secret and no webhook signature is in the SQLite file", () => {
    const { bridge } = pair();
    const path = bridge.config.DATABASE_PATH;
    const bytes = [path, `${path}-wal`].filter(existsSync).map((p) => readFileSync(p).toString("latin1")).join("\n");
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes).toContain("sec-1");
    for (const [name, value] of forms()) expect(bytes.includes(value), `${name} is in the database`).toBe(false);
  });

  it("one JSON line per request, per job attempt and per upstream call", () => {
    const count = (msg: string) => lines.filter((l) => l.msg === msg).length;
    expect(count("request")).toBe(requests);
    // The full path, also when a mounted middleware (the admin auth) answered.
    expect(lines.find((l) => l.msg === "request" && l.status === 401 && l.method === "GET")).toMatchObject({ path: "/admin/licenses" });
    expect(count("job attempt")).toBe(total(metricsText, "license_bridge_job_attempts_total"));
    expect(count("upstream call")).toBe(total(metricsText, "license_bridge_upstream_calls_total"));
    const call = lines.find((l) => l.msg === "upstream call" && l.operation === "v1.register")!;
    expect(call).toMatchObject({ level: 30, method: "POST", status: expect.any(Number), outcome: "ok", duration_ms: expect.any(Number) });
    expect(call).not.toHaveProperty("body");
    const failed = lines.find((l) => l.msg === "upstream call" && l.outcome !== "ok");
    expect(failed).toBeDefined();
  });
});
