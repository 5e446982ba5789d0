import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createMailer, parseSmtpUrl } from "../../src/mail/index.js";
import { header, mimeParts, startTestSmtp } from "../helpers/smtp.js";

const mail = {
  from: "licenses@host.example",
  to: { name: "Ann Example", address: "ann@example.com" },
  subject: "Your licence",
  text: "run:\n\n    bash install.sh\n",
  html: "<pre><code>bash install.sh</code></pre>",
  messageId: "<install.evt_1@license-bridge>",
  tag: "evt_1",
};

describe("mail transport", () => {
  it("reads credentials, port and TLS mode from SMTP_URL", () => {
    expect(parseSmtpUrl("smtp://bridge:p%40ss%3Aword@mail.example:2525")).toEqual({
      host: "mail.example",
      port: 2525,
      secure: false,
      auth: { user: "bridge", pass: "p@ss:word" },
    });
    expect(parseSmtpUrl("smtp://mail.example")).toMatchObject({ port: 587, secure: false, auth: undefined });
    expect(parseSmtpUrl("smtps://u:p@mail.example")).toMatchObject({ port: 465, secure: true });
  });

  it("describes an SMTP transport by host and port only, never its password", () => {
    const mailer = createMailer({ SMTP_URL: "smtp://bridge:hunter2-secret@mail.example:587", dataDir: "/nonexistent" });
    expect(mailer.description).toBe("smtp mail.example:587 (with auth)");
    expect(mailer.description).not.toContain("hunter2");
    mailer.close();
  });

  it("without SMTP_URL writes one readable .eml per mail to <dataDir>/outbox, leaving no temporary file", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lb-outbox-"));
    try {
      const mailer = createMailer({ dataDir });
      const sent = await mailer.send(mail);
      expect(sent.messageId).toBe(mail.messageId);
      const files = readdirSync(join(dataDir, "outbox"));
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/^\d{8}T\d{9}Z-evt_1\.eml$/);
      const raw = readFileSync(join(dataDir, "outbox", files[0]!), "utf8");
      expect(header(raw, "Message-ID")).toBe(mail.messageId);
      expect(header(raw, "To")).toMatch(/^"?Ann Example"? <ann@example.com>$/);
      expect(mimeParts(raw).text).toContain("    bash install.sh");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("a refused connection rejects the send, so the job is retried", async () => {
    const smtp = await startTestSmtp();
    const url = smtp.url;
    await smtp.close();
    const mailer = createMailer({ SMTP_URL: url, dataDir: "/nonexistent" });
    await expect(mailer.send(mail)).rejects.toThrow(/ECONNREFUSED|connect/i);
  });

  it("wrong SMTP credentials are refused by the server", async () => {
    const smtp = await startTestSmtp({ auth: { user: "bridge", pass: "right" } });
    try {
      const mailer = createMailer(
        { SMTP_URL: `smtp://bridge:wrong@127.0.0.1:${smtp.port}`, dataDir: "/nonexistent" },
        { tls: { rejectUnauthorized: false } },
      );
      await expect(mailer.send(mail)).rejects.toMatchObject({ code: "EAUTH" });
      expect(smtp.messages).toHaveLength(0);
      expect(smtp.authFailures).toBe(1);
    } finally {
      await smtp.close();
    }
  });
});
