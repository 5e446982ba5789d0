import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTemplates, SHIPPED_TEMPLATES_DIR, TemplateError, type InstallCommand } from "../../src/mail/index.js";

const LSWS = "bash <(curl -fsSL https://example.invalid/install/litespeed.sh) --ip 203.0.113.10 --key K-1";

function values(over: { customer_name?: string; product?: string; commands?: InstallCommand[] } = {}) {
  return {
    customer_name: over.customer_name ?? "Ann Example",
    customer_email: "ann@example.com",
    product: over.product ?? "LiteSpeed Web Server (4 cores)",
    ip: "203.0.113.10",
    service_id: "4711",
    commands: over.commands ?? [{ label: "LiteSpeed Web Server (4 cores)", command: LSWS }],
  };
}

describe("install mail templates", () => {
  const shipped = createTemplates(SHIPPED_TEMPLATES_DIR);

  it("a litespeed licence gets the litespeed template, with the command as a copyable block in both parts", async () => {
    const mail = await shipped.render("install", ["litespeed"], values());
    expect(mail.files).toEqual({ text: "install.litespeed.txt", html: "install.litespeed.html" });
    expect(mail.subject).toBe("Your LiteSpeed Web Server licence for 203.0.113.10 is ready");
    expect(mail.text).toContain(`\n    ${LSWS}\n`);
    expect(mail.text).toContain("LiteSpeed WebAdmin");
    expect(mail.html).toContain(`<pre><code>${LSWS.replace("<", "&lt;")}</code></pre>`);
    expect(mail.html).toContain("Ann Example");
  });

  it("a type without an override gets the default template", async () => {
    const mail = await shipped.render("install", ["plesk"], values({ product: "Plesk", commands: [{ label: "Plesk", command: "sh plesk-installer --key P-1" }] }));
    expect(mail.files).toEqual({ text: "install.txt", html: "install.html" });
    expect(mail.subject).toBe("Your Plesk licence for 203.0.113.10 is ready");
    expect(mail.text).toContain("    sh plesk-installer --key P-1");
    expect(mail.html).toContain("<pre><code>sh plesk-installer --key P-1</code></pre>");
  });

  it("every product type named in the brief has its own text and HTML", async () => {
    for (const type of ["cpanel", "litespeed", "cloudlinux", "imunify360"]) {
      const mail = await shipped.render("install", [type], values());
      expect(mail.files).toEqual({ text: `install.${type}.txt`, html: `install.${type}.html` });
      expect(mail.text).not.toMatch(/\{\{|\}\}/);
      expect(mail.html).not.toMatch(/\{\{|\}\}/);
    }
  });

  it("HTML escapes a hostile customer name; the text part keeps it as typed", async () => {
    const name = `<script>alert("x")</script> & Co`;
    const mail = await shipped.render("install", ["litespeed"], values({ customer_name: name }));
    expect(mail.html).not.toContain("<script>");
    expect(mail.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co");
    expect(mail.text).toContain(`Hello ${name},`);
  });

  it("a bundle lists one labelled install command per component licence", async () => {
    const commands = [
      { label: "cPanel & WHM", command: "bash cpanel.sh --key C-1" },
      { label: "CloudLinux OS", command: "bash cloudlinux.sh --key L-1" },
    ];
    const mail = await shipped.render("install", ["cpanel-cloudlinux", "bundle"], values({ product: "cPanel & WHM + CloudLinux OS", commands }));
    expect(mail.files).toEqual({ text: "install.bundle.txt", html: "install.bundle.html" });
    expect(mail.text).toContain("cPanel & WHM:\n\n    bash cpanel.sh --key C-1");
    expect(mail.text).toContain("CloudLinux OS:\n\n    bash cloudlinux.sh --key L-1");
    expect(mail.html).toContain("<p><strong>cPanel &amp; WHM</strong></p>\n<pre><code>bash cpanel.sh --key C-1</code></pre>");
    expect(mail.html).toContain("<pre><code>bash cloudlinux.sh --key L-1</code></pre>");
  });

  describe("in an operator's directory", () => {
    let dir: string;
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const setup = (files: Record<string, string>) => {
      dir = mkdtempSync(join(tmpdir(), "lb-tpl-"));
      for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
      return createTemplates(dir, 0);
    };

    it("each format falls back on its own, and a missing Subject line gets the default subject", async () => {
      const t = setup({ "install.txt": "Hi {{customer_name}}\n", "install.html": "<p>{{product}}</p>", "install.cpanel.html": "<b>{{ip}}</b>" });
      const mail = await t.render("install", ["cpanel"], values());
      expect(mail.files).toEqual({ text: "install.txt", html: "install.cpanel.html" });
      expect(mail.subject).toBe("Your LiteSpeed Web Server (4 cores) licence for 203.0.113.10: install command");
      expect(mail.html).toBe("<b>203.0.113.10</b>");
    });

    it("an edited template applies to the next mail without a restart", async () => {
      const t = setup({ "install.txt": "one {{ip}}", "install.html": "<p/>" });
      expect((await t.render("install", [], values())).text).toBe("one 203.0.113.10");
      writeFileSync(join(dir, "install.txt"), "second {{ip}}");
      utimesSync(join(dir, "install.txt"), new Date(), new Date(Date.now() + 5000));
      expect((await t.render("install", [], values())).text).toBe("second 203.0.113.10");
    });

    it("a typo in a placeholder stops the mail instead of reaching the customer", async () => {
      const t = setup({ "install.txt": "Hi {{custmer_name}}", "install.html": "<p/>" });
      await expect(t.render("install", [], values())).rejects.toThrow(TemplateError);
      await expect(t.render("install", [], values())).rejects.toThrow(/install\.txt uses the unknown placeholder \{\{custmer_name\}\}/);
    });

    it("a missing default template is an error naming the file", async () => {
      const t = setup({ "install.html": "<p/>" });
      await expect(t.render("install", ["plesk"], values())).rejects.toThrow(/install\.txt is missing/);
    });

    it("a variant cannot reach outside the directory", async () => {
      const t = setup({ "install.txt": "default", "install.html": "<p/>" });
      expect((await t.render("install", ["../../etc/passwd"], values())).text).toBe("default");
    });
  });
});
