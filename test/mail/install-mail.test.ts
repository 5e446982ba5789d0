import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/jobs/types.js";
import { JOB_KINDS } from "../../src/lifecycle/job-kinds.js";
import { createLogger } from "../../src/log/logger.js";
import { MailStore } from "../../src/mail/index.js";
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
import { waitFor } from "../helpers/wait.js";

const SMTP_USER = "bridge";
const SMTP_PASS = "s3cret p@ss:word";
const FROM = "licenses@host.example";

function mailJob(bridge: TestBridge, serviceId: string): Job | undefined {
  return bridge.service.queue.list({ kind: JOB_KINDS.installMail, serviceId })[0];
}

async function mailJobSucceeded(bridge: TestBridge, serviceId: string): Promise<Job> {
  return waitFor(() => {
    const job = mailJob(bridge, serviceId);
    return job?.state === "succeeded" ? job : undefined;
  }, 10_000, "the mail job to succeed");
}

/** What a crashed worker leaves behind: the job running under a lease that has run out. */
function crashWhileRunning(bridge: TestBridge, jobId: number): void {
  bridge.service.db
    .prepare("UPDATE jobs SET state = 'running', leased_by = 'dead-worker', lease_until = 0 WHERE id = ?")
    .run(jobId);
}

describe("the install-command mail over SMTP", () => {
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

  it("an SMTP outage, then recovery, delivers exactly one mail", async () => {
    smtp = await startTestSmtp();
    bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url } });
    await smtp.stop();

    const serviceId = uniqueId("svc");
    await bridge.send(createdEvent({ id: serviceId }));
    const retrying = await waitFor(() => {
      const job = mailJob(bridge, serviceId);
      return job && job.attempts >= 2 && job.state === "queued" ? job : undefined;
    }, 10_000, "the mail job to fail and be retried");
    expect(retrying.lastError).toMatch(/mail not sent: .*(ECONNREFUSED|connect)/i);
    const failedAttempt = new MailStore(bridge.service.db).get(`install:${retrying.eventId}`);
    expect(failedAttempt).toMatchObject({ state: "sending", last_error: expect.stringMatching(/mail not sent/) });

    await smtp.start();
    const job = await mailJobSucceeded(bridge, serviceId);
    expect(job.attempts).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.messages).toHaveLength(1);
    expect(new MailStore(bridge.service.db).get(`install:${job.eventId}`)).toMatchObject({ state: "sent", last_error: null });
  });

  describe("once per event", () => {
    let serviceId: string;
    let job: Job;
    beforeEach(async () => {
      smtp = await startTestSmtp();
      bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url } });
      serviceId = uniqueId("svc");
      await bridge.send(createdEvent({ id: serviceId }));
      job = await mailJobSucceeded(bridge, serviceId);
      expect(smtp.messages).toHaveLength(1);
    });

    it("the same mail enqueued again creates no job, and a succeeded job cannot be retried", () => {
      const again = bridge.service.queue.enqueue({
        kind: JOB_KINDS.installMail,
        serviceId,
        eventId: job.eventId,
        uniqueKey: job.uniqueKey,
      });
      expect(again).toEqual({ id: job.id, created: false });
      expect(bridge.service.queue.retry(job.id)).toBeUndefined();
    });

    it("a job that runs again after the mail was recorded sent sends nothing", async () => {
      crashWhileRunning(bridge, job.id);
      await waitFor(() => {
        const j = bridge.service.queue.get(job.id);
        return j?.state === "succeeded" && j.attempts > job.attempts;
      }, 10_000, "the job to run again");
      await new Promise((r) => setTimeout(r, 200));
      expect(smtp.messages).toHaveLength(1);
    });

    it("a mail left 'sending' by a crash after the server accepted is sent again with the same Message-ID", async () => {
      const mails = new MailStore(bridge.service.db);
      const key = `install:${job.eventId}`;
      bridge.service.db.prepare("UPDATE mails SET state = 'sending', sent_at = NULL WHERE mail_key = ?").run(key);
      crashWhileRunning(bridge, job.id);

      await waitFor(() => smtp.messages.length === 2, 10_000, "the second delivery");
      const [first, second] = smtp.messages;
      expect(header(second!.raw, "Message-ID")).toBe(header(first!.raw, "Message-ID"));
      expect(header(first!.raw, "Message-ID")).toBe(`<install.${job.eventId}@license-bridge>`);
      await waitFor(() => mails.get(key)?.state === "sent", 10_000, "the mail recorded sent");
      expect(mails.get(key)).toMatchObject({ attempts: 2, message_id: `<install.${job.eventId}@license-bridge>` });
      await new Promise((r) => setTimeout(r, 200));
      expect(smtp.messages).toHaveLength(2);
    });
  });
});
