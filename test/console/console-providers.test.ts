import { describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { CLN_CLOUDLINUX, MANAGE2_ADMIN, orderActiveOf, useProviderBridges } from "../helpers/providers.js";
import { clnBehindTheBridge } from "../reconcile/helpers.js";
import { ConsoleClient } from "./client.js";

/**
 * The console with the reseller, Manage2 and CLN behind one bridge (service-contract.md section
 * 12, "the console"): every licence shows its provider, the licences page filters by it, and a
 * licence's page names what it is bought as there.
 */

const rowsOf = (text: string) => [...text.matchAll(/<tr><td><a href="\/console\/licences\/([^"]+)">/g)].map((m) => decodeURIComponent(m[1]!));

async function loggedIn(bridge: TestBridge): Promise<ConsoleClient> {
  const c = new ConsoleClient(bridge.url);
  await c.login(TEST_ADMIN_TOKEN);
  return c;
}

describe("the console with three providers", () => {
  const start = useProviderBridges();

  it("shows each licence's provider, filters the licences by provider, and pages through the filtered list", async () => {
    const { bridge } = await start();
    const reseller = await orderActiveOf(bridge, "12", "203.0.113.60");
    const m2a = await orderActiveOf(bridge, "40", "203.0.113.61");
    const m2b = await orderActiveOf(bridge, "40", "203.0.113.62");
    const cln = await orderActiveOf(bridge, "41", "203.0.113.63");
    const c = await loggedIn(bridge);

    const all = await c.get("/console/licences");
    expect(all.status).toBe(200);
    expect(rowsOf(all.text).sort()).toEqual([reseller, m2a, m2b, cln].sort());
    expect(all.text).toContain("<th>Provider</th>");
    for (const title of ["the reseller", "cPanel Manage2", "CloudLinux CLN"]) expect(all.text).toContain(`<td>${title}</td>`);
    expect(all.text).toContain("4 in all.");

    const m2 = await c.get("/console/licences?provider=manage2");
    expect(rowsOf(m2.text).sort()).toEqual([m2a, m2b].sort());
    expect(m2.text).toContain('<option value="manage2" selected>');

    // A page of one, then the next through the page's own link: the filter goes along.
    const first = await c.get("/console/licences?provider=manage2&limit=1");
    expect(rowsOf(first.text)).toHaveLength(1);
    const next = /href="(\/console\/licences\?[^"]+)" rel="next"/.exec(first.text)![1]!.replaceAll("&amp;", "&");
    expect(next).toContain("provider=manage2");
    const second = await c.get(next);
    expect([...rowsOf(first.text), ...rowsOf(second.text)].sort()).toEqual([m2a, m2b].sort());
    expect(second.text).toContain("Last page");

    // The search takes the provider too: an IP of another provider's licence is no match.
    expect(rowsOf((await c.get("/console/licences?provider=cln&q=203.0.113.61")).text)).toEqual([]);
    expect(rowsOf((await c.get("/console/licences?provider=cln&q=203.0.113.63")).text)).toEqual([cln]);
  });

  it("names a Manage2 licence's provider, package and licence id on its page, and its provider in the confirmation", async () => {
    const { sbs, bridge } = await start();
    const id = await orderActiveOf(bridge, "40", "203.0.113.64");
    const licenseid = sbs.manage2.licenses().find((l) => l.ip === "203.0.113.64")!.licenseid;
    const c = await loggedIn(bridge);

    const page = await c.get(`/console/licences/${id}`);
    expect(page.text).toMatch(new RegExp(`<dt>Provider</dt><dd>cPanel Manage2 <span class="muted">\\(package ${MANAGE2_ADMIN}, licence ${licenseid}\\)</span>`));
    const confirm = await c.get(`/console/licences/${id}/confirm/suspend`);
    expect(confirm.text).toContain("Suspend this licence at cPanel Manage2?");
  });

  it("shows reconcile's drift with its provider", async () => {
    const { sbs, bridge } = await start();
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.65", type: CLN_CLOUDLINUX });
    const c = await loggedIn(bridge);
    await c.get("/console/reconcile");

    const r = await c.post("/console/reconcile", { fix: "false" });
    expect(r.status).toBe(200);
    expect(r.text).toContain("each configured provider's licence list");
    expect(r.text).toMatch(/<tr><td>unknown_locally<\/td><td>CloudLinux CLN<\/td><td><\/td><td>203\.0\.113\.65<\/td>/);
  });

  it("names the wrong field of a provider filter or a cursor", async () => {
    const { bridge } = await start();
    const c = await loggedIn(bridge);

    const provider = await c.get("/console/licences?provider=acme");
    expect(provider.status).toBe(422);
    expect(provider.text).toContain("provider: must be one of reseller, manage2, cln");
    const cursor = await c.get("/console/licences?cursor=nonsense");
    expect(cursor.status).toBe(422);
    expect(cursor.text).toContain("cursor:");
  });
});
