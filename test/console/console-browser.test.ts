import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { orderActive, untilIdle } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { testOperators, VIEWER_TOKEN } from "./client.js";

// The console in a real Chromium (Debian's, driven by playwright-core) against a running bridge
// and sandbox: what an operator does with it, click by click, and the screenshots in docs/.

const CHROMIUM = process.env.LB_CHROMIUM ?? "/usr/bin/chromium";
// The screenshots replace docs/'s only when asked (LB_UPDATE_SCREENSHOTS=1): a run of the tests
// leaves the tree as it found it. Otherwise they are still taken, into a temp folder.
const UPDATE_SCREENSHOTS = process.env.LB_UPDATE_SCREENSHOTS === "1";
const SHOTS = UPDATE_SCREENSHOTS ? resolve(import.meta.dirname, "../../docs") : mkdtempSync(join(tmpdir(), "lb-screenshots-"));

describe("the operator console in a browser", () => {
  let browser: Browser;
  let sb: TestSandbox;
  let bridge: TestBridge;
  let page: Page;

  beforeAll(async () => {
    // Without Debian's chromium the suite fails here, naming what to install (never skipped: CI installs it).
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set LB_CHROMIUM)`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    if (!UPDATE_SCREENSHOTS) rmSync(SHOTS, { recursive: true, force: true });
  });
  beforeEach(async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb, { consoleOperators: testOperators });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  });
  afterEach(async () => {
    await page.close();
    await bridge.close();
    await sb.close();
  });

  const logIn = async (token: string) => {
    await page.goto(`${bridge.url}/console`);
    await page.getByLabel("Operator token").fill(token);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${bridge.url}/console`);
  };
  const search = async (q: string) => {
    await page.getByRole("link", { name: "Licences" }).click();
    await page.getByLabel("Service id, IP, customer e-mail or licence key").fill(q);
    await page.getByRole("button", { name: "Search" }).click();
  };

  it("logs in, finds a licence by e-mail and by IP, changes its IP and shows it in the history", async () => {
    const id = await orderActive(bridge, { email: "carol@example.com", ip: "203.0.113.77" });
    await orderActive(bridge, { email: "dave@example.com" });
    await logIn(TEST_ADMIN_TOKEN);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}/console-overview.png`, fullPage: true });

    await search("Carol@example.com");
    expect(await page.locator("tbody tr").count()).toBe(1);
    await search("203.0.113.77");
    await page.getByRole("link", { name: id }).click();
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain(id);

    await page.getByRole("link", { name: "Change IP" }).click();
    await page.getByLabel("New IP address").fill("203.0.113.78");
    await page.getByRole("button", { name: "Confirm" }).click();
    expect(await page.getByRole("status").textContent()).toContain("Accepted");
    await untilIdle(bridge);
    await page.goto(`${bridge.url}/console/licences/${id}`);
    expect(await page.locator("dl.facts").textContent()).toContain("203.0.113.78");
    expect(await page.locator("ol.timeline").textContent()).toMatch(/203\.0\.113\.78/);
    await page.screenshot({ path: `${SHOTS}/console-licence.png`, fullPage: true });
  });

  it("retries a job blocked on the balance after a top-up, and the licence becomes active", async () => {
    sb.sandbox.setBalance(0);
    const order = await bridge.send({ type: "service.created", service: { id: "blocked-1", product_id: "12", billing_cycle: "monthly", ip: "203.0.113.90", customer: { email: "erin@example.com" } } });
    expect(order.status).toBe(202);
    await waitFor(async () => (await bridge.service.queue.list({ serviceId: "blocked-1" })).some((j) => j.state === "blocked"), 10_000, "the register job blocked");
    sb.sandbox.setBalance(1000);
    await logIn(TEST_ADMIN_TOKEN);
    expect(await page.locator("main").textContent()).toContain("top it up");
    await page.getByRole("link", { name: "Jobs" }).click();
    await page.getByRole("link", { name: "Retry" }).first().click();
    await page.getByRole("button", { name: /Retry job/ }).click();
    expect(await page.getByRole("status").textContent()).toContain("queued again");
    await untilIdle(bridge);
    await page.goto(`${bridge.url}/console/licences/blocked-1`);
    expect(await page.locator("h1 .status").textContent()).toBe("active");
  });

  it("refuses a viewer's action, refuses a form without its CSRF value, and ends the session at logout", async () => {
    const id = await orderActive(bridge, {});
    await logIn(VIEWER_TOKEN);
    await page.goto(`${bridge.url}/console/licences/${id}`);
    expect(await page.locator(".actions").textContent()).toContain("reads only");
    // The viewer's browser posts the form the page would not offer: the server refuses it.
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const refused = await page.request.post(`${bridge.url}/console/licences/${id}/suspend`, { form: { csrf } });
    expect(refused.status()).toBe(403);
    const noToken = await page.request.post(`${bridge.url}/console/licences/${id}/suspend`, { form: {} });
    expect(noToken.status()).toBe(403);
    expect(await noToken.text()).toContain("CSRF");
    expect((await bridge.service.services.get(id))!.status).toBe("active");

    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(`${bridge.url}/console/login`);
    await page.goto(`${bridge.url}/console`);
    expect(page.url()).toBe(`${bridge.url}/console/login`);
  });
});
