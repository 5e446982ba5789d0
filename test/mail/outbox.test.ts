import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JOB_KINDS } from "../../src/vocabulary/job-kinds.js";
import { createdEvent, uniqueId } from "../helpers/bridge.js";
import { usePairPerFile } from "../helpers/e2e-harness.js";
import { header, mimeParts, sandboxInstallCommand, startMailBridge, unescapeHtml } from "../helpers/smtp.js";
import { waitFor } from "../helpers/wait.js";

describe("the install-command mail without SMTP_URL", () => {
  // Each test orders its own service at its own IP, and finds its mail by the service id.
  const pair = usePairPerFile({ bridge: (sb) => startMailBridge(sb) });
  const outbox = () => join(pair().bridge.config.dataDir, "outbox");

  /** The file the service's mail was written to, and what it holds. */
  async function mailFor(serviceId: string): Promise<{ file: string; raw: string }> {
    const { bridge } = pair();
    await waitFor(
      async () => (await bridge.service.queue.list({ kind: JOB_KINDS.installMail, serviceId }))[0]?.state === "succeeded",
      10_000,
      "the mail job to succeed",
    );
    const files = readdirSync(outbox());
    expect(files.filter((f) => !f.endsWith(".eml"))).toEqual([]);
    const mine = files.filter((f) => readFileSync(join(outbox(), f), "utf8").includes(serviceId));
    expect(mine).toHaveLength(1);
    return { file: mine[0]!, raw: readFileSync(join(outbox(), mine[0]!), "utf8") };
  }

  it("is written as a readable .eml under <dataDir>/outbox/ containing the command", async () => {
    const { sb, bridge } = pair();
    const serviceId = uniqueId("svc");
    const sent = await bridge.send(createdEvent({ id: serviceId, ip: "203.0.113.10", email: "ann@example.com" }));
    const { file, raw } = await mailFor(serviceId);

    expect(file).toMatch(new RegExp(`^\\d{8}T\\d{9}Z-${String(sent.body.event_id)}\\.eml$`));
    expect(header(raw, "From")).toBe("licenses@localhost");
    expect(header(raw, "To")).toMatch(/<ann@example\.com>/);
    expect(header(raw, "Subject")).toBe("Your cPanel & WHM licence for 203.0.113.10 is ready");
    const command = await sandboxInstallCommand(sb, "203.0.113.10", "cpanel");
    const parts = mimeParts(raw);
    expect(parts.text).toContain(`    ${command}`);
    expect(unescapeHtml(parts.html ?? "")).toContain(`<pre><code>${command}</code></pre>`);
  });

  it("for a bundle lists one install command per component licence", async () => {
    const { sb, bridge } = pair();
    const serviceId = uniqueId("svc");
    await bridge.send(createdEvent({ id: serviceId, product_id: "20", ip: "203.0.113.30" }));
    const { raw } = await mailFor(serviceId);

    const cpanel = await sandboxInstallCommand(sb, "203.0.113.30", "cpanel");
    const cloudlinux = await sandboxInstallCommand(sb, "203.0.113.30", "cloudlinux");
    const parts = mimeParts(raw);
    expect(header(raw, "Subject")).toBe("Your cPanel & WHM + CloudLinux OS licences for 203.0.113.30 are ready");
    expect(parts.text).toContain(`cPanel & WHM:\n\n    ${cpanel}`);
    expect(parts.text).toContain(`CloudLinux OS:\n\n    ${cloudlinux}`);
    const html = unescapeHtml(parts.html ?? "");
    expect(html).toContain(`<pre><code>${cpanel}</code></pre>`);
    expect(html).toContain(`<pre><code>${cloudlinux}</code></pre>`);
  });
});
