import type http from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { UnexpectedAnswerError } from "../../src/reseller/errors.js";
import { createV1Client } from "../../src/reseller/v1.js";
import { createdEvent, startTestSandbox, uniqueId, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { mimeParts, sandboxInstallCommand, startMailBridge, startTestSmtp, type TestSmtp } from "../helpers/smtp.js";
import { waitFor } from "../helpers/wait.js";
import { QUICK_RETRY, rejection, startTinyServer, type TinyServer } from "./helpers.js";

/**
 * What the bridge takes for an install command (service-contract.md section 7: a string under
 * `command` or `install_command`, or a plain-text body). The command is mailed to the customer
 * as is, so an answer that is not a command (a JSON body cut short, a PHP error page, a
 * sentence) must be refused as an unusable answer, which the mail job retries, and never read
 * as the command.
 */

const TOKEN = "tok_install_cmd_0123456789";
const LICENSE = { ip: "203.0.113.10", type: "cpanel" } as const;
const CURL = "bash <(curl -s https://lic.example/install.sh)";

interface Reply {
  contentType?: string;
  body: string;
}

function answer(res: http.ServerResponse, reply: Reply): void {
  res.writeHead(200, reply.contentType === undefined ? {} : { "content-type": reply.contentType });
  res.end(reply.body);
}

describe("the install command a v1 answer carries", () => {
  let server: TinyServer;
  let reply: Reply = { body: "" };
  beforeAll(async () => {
    server = await startTinyServer((_req, res) => answer(res, reply));
  });
  afterAll(() => server.close());

  const installCommand = () => createV1Client({ baseUrl: `${server.url}/api/v1`, token: TOKEN, retry: QUICK_RETRY }).installCommand(LICENSE);

  const TEXT = "text/plain; charset=utf-8";
  // PHP's default type: a script that prints JSON without setting a header sends it as HTML.
  const PHP_DEFAULT = "text/html; charset=UTF-8";
  const JSON_TYPE = "application/json";

  it.each<[string, Reply, string]>([
    ["JSON with command", { contentType: JSON_TYPE, body: JSON.stringify({ success: true, command: CURL }) }, CURL],
    ["JSON with data.install_command", { contentType: JSON_TYPE, body: JSON.stringify({ data: { install_command: CURL } }) }, CURL],
    ["JSON sent as text/html", { contentType: PHP_DEFAULT, body: JSON.stringify({ command: CURL }) }, CURL],
    ["plain text: process substitution", { contentType: TEXT, body: `${CURL}\n` }, CURL],
    ["plain text: sh -c with quotes", { contentType: TEXT, body: 'sh -c "$(curl -fsSL https://lic.example/i.sh)" -- --key LIC-1' }, 'sh -c "$(curl -fsSL https://lic.example/i.sh)" -- --key LIC-1'],
    ["plain text: && and |", { contentType: TEXT, body: "cd /root && curl -s https://lic.example/i.sh | bash -s -- 203.0.113.10" }, "cd /root && curl -s https://lic.example/i.sh | bash -s -- 203.0.113.10"],
    ["plain text: redirections", { contentType: TEXT, body: "wget -qO- https://lic.example/i.sh 2>/dev/null | sh </dev/null" }, "wget -qO- https://lic.example/i.sh 2>/dev/null | sh </dev/null"],
    ["plain text: a path alone", { contentType: TEXT, body: "/usr/local/cpanel/cpkeyclt" }, "/usr/local/cpanel/cpkeyclt"],
    ["plain text: a test in brackets", { contentType: TEXT, body: `[ -x /usr/bin/curl ] && ${CURL}` }, `[ -x /usr/bin/curl ] && ${CURL}`],
    ["plain text: a brace group", { contentType: TEXT, body: "{ curl -s https://lic.example/i.sh; } | sh" }, "{ curl -s https://lic.example/i.sh; } | sh"],
    ["plain text: a variable and a placeholder", { contentType: TEXT, body: "KEY=LIC-1 sh install.sh --ip=<IP>" }, "KEY=LIC-1 sh install.sh --ip=<IP>"],
    ["plain text: a line of words before the command", { contentType: TEXT, body: `Run as root:\n${CURL}\n` }, `Run as root:\n${CURL}`],
    ["plain text: several lines of shell", { contentType: TEXT, body: "# as root\ncd /root\nwget https://lic.example/i.sh\nsh i.sh\n" }, "# as root\ncd /root\nwget https://lic.example/i.sh\nsh i.sh"],
    ["plain text with no type", { body: CURL }, CURL],
    ["plain text sent as text/html", { contentType: PHP_DEFAULT, body: CURL }, CURL],
  ])("%s is the command", async (_what, r, command) => {
    reply = r;
    expect((await installCommand()).command).toBe(command);
  });

  it.each<[string, Reply]>([
    // The audit's case: the closing brace is missing.
    ["JSON cut short", { contentType: JSON_TYPE, body: `{"success":true,"command":"${CURL}"` }],
    ["JSON cut short, sent as text/html", { contentType: PHP_DEFAULT, body: `{"success":true,"command":"${CURL}"` }],
    ["a JSON array cut short, with no type", { body: `[{"command":"${CURL}"}` }],
    ["pretty-printed JSON cut short", { contentType: PHP_DEFAULT, body: `{\n    "success": true,\n    "command": "${CURL}"\n` }],
    ["a body declared JSON that is plain text", { contentType: JSON_TYPE, body: CURL }],
    ["a body declared JSON with a PHP notice before it", { contentType: JSON_TYPE, body: `Notice: Undefined index: ip in /var/www/api.php on line 7\n{"command":"${CURL}"}` }],
    ["a PHP fatal error", { contentType: PHP_DEFAULT, body: "Fatal error: <b>Uncaught</b> Exception: database down in /var/www/api.php:12" }],
    ["a PHP fatal error without markup", { contentType: TEXT, body: "PHP Fatal error:  Uncaught Exception: database down in /var/www/api.php:12" }],
    ["a PHP warning, then the command", { contentType: PHP_DEFAULT, body: `<br />\n<b>Warning</b>:  mysqli_connect(): No such file in <b>/var/www/db.php</b> on line <b>3</b><br />\n${CURL}` }],
    ["a PHP notice", { contentType: TEXT, body: "Notice: Undefined variable: key in /var/www/api.php on line 30" }],
    ["a PHP deprecation", { contentType: TEXT, body: "Deprecated: Function create_function() is deprecated in /var/www/api.php on line 9" }],
    ["markup after some text", { contentType: PHP_DEFAULT, body: "Down for maintenance <p>back soon</p>" }],
    ["a command escaped for HTML", { contentType: JSON_TYPE, body: JSON.stringify({ command: "bash &lt;(curl -s https://lic.example/install.sh)" }) }],
    ["an HTML page", { contentType: PHP_DEFAULT, body: "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head></html>" }],
    ["several lines of prose", { contentType: TEXT, body: "The licence could not be found.\nPlease contact support." }],
    ["a sentence", { contentType: TEXT, body: "License not found" }],
    ["a capitalised word", { contentType: TEXT, body: "Unauthorized" }],
    ["a status word", { contentType: TEXT, body: "OK" }],
    ["a number", { contentType: TEXT, body: "0" }],
    ["an empty body", { contentType: TEXT, body: "  \n" }],
  ])("%s is an unexpected answer the job retries, never the command", async (_what, r) => {
    reply = r;
    const error = await rejection(installCommand());
    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ kind: "unexpected", operation: "v1.installCommand", status: 200, disposition: "retry" });
    expect((error as Error).message).toMatch(/^v1\.installCommand: unexpected answer/);
  });
});

describe("the install mail when the reseller's install-command answer is broken", () => {
  let sb: TestSandbox;
  let smtp: TestSmtp;
  let bridge: TestBridge | undefined;
  let proxy: TinyServer;
  /** While set, the install-command call is answered with it instead of the sandbox's answer. */
  let broken: Reply | undefined;

  beforeAll(async () => {
    sb = await startTestSandbox();
    smtp = await startTestSmtp();
    const sandboxOrigin = new URL(sb.running.apiUrl).origin;
    // Stands in front of the sandbox: everything is passed on except a broken install command.
    proxy = await startTinyServer((req, res, seen) => {
      if (broken && seen.url.startsWith("/api/v1/license/install-command")) return answer(res, broken);
      const headers: Record<string, string> = {};
      for (const name of ["authorization", "content-type", "accept"]) {
        const value = req.headers[name];
        if (typeof value === "string") headers[name] = value;
      }
      fetch(sandboxOrigin + seen.url, { method: seen.method, headers, body: seen.method === "GET" ? undefined : seen.body })
        .then(async (upstream) => {
          res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "text/plain" });
          res.end(await upstream.text());
        })
        .catch(() => res.destroy());
    });
  });
  afterEach(async () => {
    await bridge?.close();
    bridge = undefined;
  });
  afterAll(async () => {
    await proxy.close();
    await smtp.close();
    await sb.close();
  });

  it("sends no mail while the answer is JSON cut short, retries the job, and mails the real command once it is whole", async () => {
    broken = { contentType: "application/json", body: `{"success":true,"command":"${CURL}"` };
    bridge = await startMailBridge(sb, { env: { SMTP_URL: smtp.url, RESELLER_API_URL: `${proxy.url}/api/v1` } });
    const serviceId = uniqueId("svc");
    const ip = "203.0.113.77";
    expect((await bridge.send(createdEvent({ id: serviceId, ip }))).status).toBe(202);

    const mailJob = async () => (await bridge!.service.queue.list({ kind: "mail_install", serviceId }))[0];
    const retrying = await waitFor(async () => {
      const job = await mailJob();
      return job && ((job.attempts >= 2 && job.state === "queued") || job.state === "succeeded") ? job : undefined;
    }, 10_000, "the mail job to be queued again (or to succeed)");
    expect(smtp.messages.map((m) => mimeParts(m.raw).text)).toEqual([]);
    expect(retrying).toMatchObject({ state: "queued", lastError: expect.stringMatching(/v1\.installCommand: unexpected answer/) });

    broken = undefined;
    await waitFor(async () => (await mailJob())?.state === "succeeded", 10_000, "the mail job to succeed");
    expect(smtp.messages).toHaveLength(1);
    const text = mimeParts(smtp.messages[0]!.raw).text ?? "";
    expect(text).toContain(await sandboxInstallCommand(sb, ip, "cpanel"));
    expect(text).not.toContain("lic.example");
  });
});
