import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/vocabulary/jobs.js";
import { JOB_KINDS } from "../../src/vocabulary/job-kinds.js";
import { createLogger } from "../../src/log/logger.js";
import { createdEvent, startTestSandbox, uniqueId, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import {
  header,
  mimeParts,
  sandboxInstallCommand,
  startMailBridge,
  startTestSmtp,
  unescapeHtml,
  type TestSmtp,
} from "../helpers/smtp.js";
import { untilIdle } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

const SMTP_USER = "bridge";
const SMTP_PASS = "s3cret p@ss:word";
const FROM = "licenses@host.example";

async function mailJob(bridge: TestBridge, serviceId: string): Promise<Job | undefined> {
  return (await bridge.service.queue.list({ kind: JOB_KINDS.installMail, serviceId }))[0];
}

async function mailJobSucceeded(bridge: TestBridge, serviceId: string): Promise<Job> {
  return waitFor(async () => {
    const job = await mailJob(bridge, serviceId);
    return job?.state === "succeeded" ? job : undefined;
  }, 10_000, "the mail job to succeed");
}

/**
 * What a worker that crashed while running the mail of `job`'s event leaves behind: a job for
 * that event running under a lease that has run out. (The store never takes a succeeded job
 * back to running, so the crash is staged with a second job of the same event, hence the same
 * mail, claimed by a worker of another host that then dies; the runner is paused meanwhile so
 * that it cannot claim the job first.) Returns the new job's id.
 */
async function crashWhileRunning(bridge: TestBridge, job: Job): Promise<number> {
  const { runner, store } = bridge.service;
  await runner.stop(2_000);
  try {
    const { id } = await store.jobs.enqueue({ kind: job.kind, serviceId: job.serviceId, eventId: job.eventId, queueKey: job.queueKey });
    const claimed = await store.jobs.claim("crashed-host:4242:dead", 1, 0);
    expect(claimed.map((j) => j.id)).toEqual([id]);
    return id;
  } finally {
    await runner.start();
  }
}

describe("the install-command mail over SMTP", () => {
  // A bridge per test, started inside it, not per file: each sends to an SMTP sink of its own,
  // set up its own way (auth and STARTTLS, plain, one that goes down), and counts that sink's
  // messages from the first; the "once per event" tests also stage a crash of a mail job.
  let sb: TestSandbox;
  let smtp: TestSmtp;
  let bridge: TestBridge;
  beforeEach(async () => {
    sb = await startTestSandbox();
  });
  afterEach(async () => {
    await bridge?.close();
    await smtp?.close();
    await sb.close();
  });

  it("arrives with auth and STARTTLS, to the customer, from MAIL_FROM, with the install command in text and HTML", async () => {
    smtp = await startTestSmtp({ auth: { user: SMTP_USER, pass: SMTP_PASS } });
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on("data", (c: Buffer) => lines.push(c.toString("utf8")));
    bridge = await startMailBridge(sb, {
      env: {
        SMTP_URL: `smtp://${SMTP_USER}:${encodeURIComponent(SMTP_PASS)}@127.0.0.1:${smtp.port}`,
        MAIL_FROM: FROM,
        LOG_LEVEL: "debug",
      },
      // smtp-server's built-in certificate is self-signed.
      tls: { rejectUnauthorized: false },
      logger: createLogger({ level: "debug", destination: sink, pretty: false }),
    });
    const serviceId = uniqueId("svc");
    const sent = await bridge.send(createdEvent({ id: serviceId, ip: "203.0.113.10", email: "ann@example.com" }));
    expect(sent.status).toBe(202);

    await waitFor(() => smtp.messages.length === 1, 10_000, "one message at the SMTP server");
    const msg = smtp.messages[0]!;
    expect(msg.secure).toBe(true);
    expect(msg.user).toBe(SMTP_USER);
    expect(msg.envelope).toEqual({ from: FROM, to: ["ann@example.com"] });
    expect(header(msg.raw, "From")).toBe(FROM);
    expect(header(msg.raw, "To")).toMatch(/Ann Example.*<ann@example\.com>/);
    expect(header(msg.raw, "Message-ID")).toBe(`<install.${String(sent.body.event_id)}@license-bridge>`);

    const command = await sandboxInstallCommand(sb, "203.0.113.10", "cpanel");
    const parts = mimeParts(msg.raw);
    expect(parts.text).toContain(`    ${command}`);
    expect(unescapeHtml(parts.html ?? "")).toContain(`<pre><code>${command}</code></pre>`);
    expect(parts.text).toContain("Hello Ann Example,");

    await mailJobSucceeded(bridge, serviceId);
    const view = await bridge.admin(`/admin/services/${serviceId}`);
    const history = view.body.history as { action: string; detail: string }[];
    expect(history).toContainEqual(
      expect.objectContaining({
        action: "install mail sent",
        detail: `install mail sent to ann@example.com (Message-ID <install.${String(sent.body.event_id)}@license-bridge>)`,
      }),
    );
    const jobs = await bridge.admin(`/admin/jobs?service_id=${serviceId}`);
    expect(jobs.body.jobs).toContainEqual(expect.objectContaining({ kind: "mail_install", state: "succeeded" }));

    const log = lines.join("");
    expect(log).toContain("install mail sent");
    expect(log).toContain(`127.0.0.1:${smtp.port}`);
    expect(log).not.toContain("s3cret");
    expect(log).not.toContain(encodeURIComponent(SMTP_PASS));
  });

  it("arrives through a plain SMTP server without auth or STARTTLS", async () => {
    smtp = await startTestSmtp();
    bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url, MAIL_FROM: FROM } });
    const serviceId = uniqueId("svc");
    await bridge.send(createdEvent({ id: serviceId, product_id: "13", ip: "203.0.113.20", email: "bob@example.com" }));

    await waitFor(() => smtp.messages.length === 1, 10_000, "one message at the SMTP server");
    const msg = smtp.messages[0]!;
    expect(msg.secure).toBe(false);
    expect(msg.envelope).toEqual({ from: FROM, to: ["bob@example.com"] });
    const command = await sandboxInstallCommand(sb, "203.0.113.20", "litespeed");
    const parts = mimeParts(msg.raw);
    expect(parts.text).toContain(`    ${command}`);
    expect(parts.text).toContain("LiteSpeed WebAdmin");
    expect(unescapeHtml(parts.html ?? "")).toContain(`<pre><code>${command}</code></pre>`);
    expect(header(msg.raw, "Subject")).toBe("Your LiteSpeed Web Server licence for 203.0.113.20 is ready");
    await mailJobSucceeded(bridge, serviceId);
  });

  it("an operator's resend arrives as a second message, with its own Message-ID and the same install command", async () => {
    smtp = await startTestSmtp();
    bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url, MAIL_FROM: FROM } });
    const serviceId = uniqueId("svc");
    await bridge.send(createdEvent({ id: serviceId, ip: "203.0.113.21", email: "cy@example.com" }));
    await waitFor(() => smtp.messages.length === 1, 10_000, "the order's message");
    await mailJobSucceeded(bridge, serviceId);

    const resent = await bridge.admin(`/admin/services/${serviceId}/resend-install-mail`, { method: "POST" });
    expect(resent.status).toBe(202);
    await waitFor(() => smtp.messages.length === 2, 10_000, "the resent message");
    const [first, second] = smtp.messages;
    expect(second!.envelope).toEqual({ from: FROM, to: ["cy@example.com"] });
    expect(header(second!.raw, "Message-ID")).toBe(`<install.job-${String(resent.body.job_id)}@license-bridge>`);
    expect(header(second!.raw, "Message-ID")).not.toBe(header(first!.raw, "Message-ID"));
    expect(mimeParts(second!.raw).text).toContain(`    ${await sandboxInstallCommand(sb, "203.0.113.21", "cpanel")}`);
    await waitFor(async () => (await bridge.service.queue.get(resent.body.job_id as number))?.state === "succeeded", 10_000, "the resend's job");
    // Nothing more goes out: each mail is sent once.
    await untilIdle(bridge);
    expect(smtp.messages).toHaveLength(2);
  });

  it("an SMTP outage, then recovery, delivers exactly one mail", async () => {
    smtp = await startTestSmtp();
    bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url } });
    await smtp.stop();

    const serviceId = uniqueId("svc");
    await bridge.send(createdEvent({ id: serviceId }));
    const retrying = await waitFor(async () => {
      const job = await mailJob(bridge, serviceId);
      return job && job.attempts >= 2 && job.state === "queued" ? job : undefined;
    }, 10_000, "the mail job to fail and be retried");
    expect(retrying.lastError).toMatch(/mail not sent: .*(ECONNREFUSED|connect)/i);
    const failedAttempt = await bridge.service.store.mails.get(`install:${retrying.eventId}`);
    expect(failedAttempt).toMatchObject({ state: "sending", last_error: expect.stringMatching(/mail not sent/) });

    await smtp.start();
    const job = await mailJobSucceeded(bridge, serviceId);
    expect(job.attempts).toBeGreaterThanOrEqual(3);
    // The sink holds a mail before it accepts it; with no job left to run, nothing more can be sent.
    await untilIdle(bridge);
    expect(smtp.messages).toHaveLength(1);
    expect(await bridge.service.store.mails.get(`install:${job.eventId}`)).toMatchObject({ state: "sent", last_error: null });
  });

  describe("once per event", () => {
    let serviceId: string;
    let job: Job;
    /** Armed: the next mail job dies after the server accepted its mail, before the bridge recorded it. */
    const crash = { armed: false };
    beforeEach(async () => {
      crash.armed = false;
      smtp = await startTestSmtp();
      bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url }, crashAfterSend: crash });
      serviceId = uniqueId("svc");
      await bridge.send(createdEvent({ id: serviceId }));
      job = await mailJobSucceeded(bridge, serviceId);
      expect(smtp.messages).toHaveLength(1);
    });

    it("the same mail enqueued again creates no job, and a succeeded job cannot be retried", async () => {
      const again = await bridge.service.queue.enqueue({
        kind: JOB_KINDS.installMail,
        serviceId,
        eventId: job.eventId,
        uniqueKey: job.uniqueKey,
      });
      expect(again).toEqual({ id: job.id, created: false });
      expect(await bridge.service.queue.retry(job.id)).toBeUndefined();
    });

    it("a job that runs again after the mail was recorded sent sends nothing", async () => {
      const again = await crashWhileRunning(bridge, job);
      await waitFor(async () => {
        const j = await bridge.service.queue.get(again);
        // Its first attempt died with the worker; the runner took it back after the lease.
        return j?.state === "succeeded" && j.attempts > 1;
      }, 10_000, "the job to run again");
      await untilIdle(bridge);
      expect(smtp.messages).toHaveLength(1);
    });

    it("a mail left 'sending' by a crash after the server accepted is sent again with the same Message-ID", async () => {
      const { mails } = bridge.service.store;
      crash.armed = true;
      const other = uniqueId("svc");
      const sent = await bridge.send(createdEvent({ id: other }));
      const key = `install:${String(sent.body.event_id)}`;

      await waitFor(() => smtp.messages.length === 3, 10_000, "the second delivery");
      const [, first, second] = smtp.messages;
      expect(header(second!.raw, "Message-ID")).toBe(header(first!.raw, "Message-ID"));
      expect(header(first!.raw, "Message-ID")).toBe(`<install.${String(sent.body.event_id)}@license-bridge>`);
      await waitFor(async () => (await mails.get(key))?.state === "sent", 10_000, "the mail recorded sent");
      expect(await mails.get(key)).toMatchObject({ attempts: 2, message_id: `<install.${String(sent.body.event_id)}@license-bridge>` });
      await mailJobSucceeded(bridge, other);
      await untilIdle(bridge);
      expect(smtp.messages).toHaveLength(3);
    });
  });
});
