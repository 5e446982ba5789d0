import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createdEvent, serviceEvent, startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { untilIdle } from "../helpers/e2e-harness.js";

// The admin API's listings are pages (service contract, section 4): limit (default 100, at most
// 1000) and cursor in, next_cursor and total out beside the list, nothing cut silently; q finds
// a licence by any of its keys; a service's history shows its latest entries and pages the rest.

type Body = Record<string, unknown>;
interface LicensePage {
  licenses: { service_id: string; ip: string; status: string }[];
  next_cursor: string | null;
  total: number;
}

describe("admin API paging", () => {
  let sb: TestSandbox;
  let bridge: TestBridge;
  const ordered: string[] = [];

  const order = async (over: Parameters<typeof createdEvent>[0] = {}) => {
    const event = createdEvent(over);
    expect((await bridge.send(event)).status).toBe(202);
    ordered.push(event.service.id);
    return event.service.id;
  };

  beforeAll(async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb);
    for (let i = 0; i < 5; i++) await order();
    await order({ id: "paging-ann", ip: "2001:db8::a1", email: "Ann.Paging@Example.com" });
    await untilIdle(bridge);
  });

  afterAll(async () => {
    await bridge?.close();
    await sb?.close();
  });

  const licenses = async (query: string) => {
    const res = await bridge.admin(`/admin/licenses${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as unknown as LicensePage;
  };

  it("answers next_cursor and total beside the list; the last page's cursor is null", async () => {
    const all = await licenses("");
    expect(all.total).toBe(ordered.length);
    expect(all.next_cursor).toBeNull();
    const first = await licenses("?limit=2");
    expect(first.licenses).toHaveLength(2);
    expect(first).toMatchObject({ total: ordered.length, next_cursor: expect.any(String) });
  });

  it("a walk of the pages while orders arrive returns every licence that was there exactly once", async () => {
    const before = (await licenses("?limit=1000")).licenses.map((l) => l.service_id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: LicensePage = await licenses(`?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      walked.push(...page.licenses.map((l) => l.service_id));
      cursor = page.next_cursor;
      await order();
    } while (cursor);
    expect(new Set(walked).size).toBe(walked.length);
    for (const id of before) expect(walked.filter((w) => w === id)).toEqual([id]);
    await untilIdle(bridge);
  });

  it.each([
    ["/admin/licenses?limit=0"],
    ["/admin/licenses?limit=-1"],
    ["/admin/licenses?limit=1001"],
    ["/admin/licenses?limit=ten"],
    ["/admin/licenses?limit=1.5"],
    ["/admin/licenses?limit=1e3"],
    ["/admin/jobs?limit=0"],
    ["/admin/jobs?limit=1001"],
    ["/admin/services/paging-ann/history?limit=0"],
  ])("%s is refused with 422 naming limit", async (path) => {
    const res = await bridge.admin(path);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "validation", field: "limit", errors: { limit: [expect.stringContaining("1 to 1000")] } });
  });

  it("a cursor that this listing did not answer is refused with 422 naming cursor", async () => {
    const jobsCursor = (await bridge.admin("/admin/jobs?limit=1")).body.next_cursor as string;
    expect(jobsCursor).toEqual(expect.any(String));
    for (const path of ["/admin/licenses?cursor=nonsense", `/admin/licenses?cursor=${jobsCursor}`, "/admin/jobs?cursor=%7B%7D", "/admin/services/paging-ann/history?cursor=x"]) {
      const res = await bridge.admin(path);
      expect(res.status, path).toBe(422);
      expect(res.body, path).toMatchObject({ field: "cursor", errors: { cursor: [expect.any(String)] } });
    }
  });

  it("q finds a licence by service id, IP in any spelling, customer e-mail in any case and licence key", async () => {
    const key = (await bridge.service.services.get("paging-ann"))!.license_key;
    for (const q of ["paging-ann", "2001:DB8:0::A1", "ann.paging@example.com", key]) {
      const page = await licenses(`?q=${encodeURIComponent(q)}`);
      expect(page, q).toMatchObject({ total: 1, next_cursor: null, licenses: [{ service_id: "paging-ann", ip: "2001:db8::a1" }] });
    }
    expect(await licenses("?q=paging-ann&status=terminated")).toEqual({ licenses: [], next_cursor: null, total: 0 });
    expect((await licenses("?q=paging-ann&status=active")).total).toBe(1);
    expect(await licenses("?q=nobody%40example.com")).toEqual({ licenses: [], next_cursor: null, total: 0 });
  });

  it("GET /admin/licenses/export answers every licence, one JSON object a line, as the pages list them", async () => {
    const exported = async (query: string) => {
      const res = await fetch(`${bridge.url}/admin/licenses/export${query}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
      return (await res.text()).split("\n").filter(Boolean).map((line) => JSON.parse(line) as { service_id: string });
    };
    expect(await exported("")).toEqual((await licenses("?limit=1000")).licenses);
    expect((await exported("?q=paging-ann")).map((l) => l.service_id)).toEqual(["paging-ann"]);
    const bad = await bridge.admin("/admin/licenses/export?limit=5");
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ field: "limit", errors: { limit: ["is not a known field"] } });
  });

  it("pages the jobs newest first, filtered by service, with the total", async () => {
    const res = await bridge.admin("/admin/jobs?service_id=paging-ann&limit=1");
    expect(res.status).toBe(200);
    const body = res.body as { jobs: { id: number; service_id: string }[]; next_cursor: string; total: number };
    expect(body.jobs).toHaveLength(1);
    expect(body.total).toBeGreaterThanOrEqual(2); // register, then the install mail
    const rest = (await bridge.admin(`/admin/jobs?service_id=paging-ann&limit=1000&cursor=${body.next_cursor}`)).body as { jobs: { id: number }[] };
    expect(rest.jobs.every((j) => j.id < body.jobs[0]!.id)).toBe(true);
    expect(rest.jobs.length + 1).toBe(body.total);
  });

  it("a service's history: its latest entries oldest first, and all of them page through /history newest first", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await bridge.send(serviceEvent("service.suspended", "paging-ann"))).status).toBe(202);
      expect((await bridge.send(serviceEvent("service.unsuspended", "paging-ann"))).status).toBe(202);
    }
    await untilIdle(bridge);
    const detail = (await bridge.admin("/admin/services/paging-ann")).body as Body & { history: { action: string }[]; history_total: number };
    expect(detail.history[0]!.action).toBe("received service.created");
    expect(detail.history_total).toBe(detail.history.length);
    expect(detail.history_next_cursor).toBeNull();

    const walked: { action: string }[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: Body } = await bridge.admin(`/admin/services/paging-ann/history?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ service_id: "paging-ann", total: detail.history_total });
      walked.push(...(res.body.history as { action: string }[]));
      cursor = res.body.next_cursor as string | null;
    } while (cursor);
    expect(walked).toEqual([...detail.history].reverse());
  });

  it("history of a service the bridge does not know is 404", async () => {
    const res = await bridge.admin("/admin/services/no-such-service/history");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: "unknown_service" });
  });

  it("GET /admin/queue tells the depth and how long the oldest due job has waited", async () => {
    await untilIdle(bridge);
    expect((await bridge.admin("/admin/queue")).body).toEqual({ depth: 0, oldest_due_at: null, lag_seconds: 0, queued_by_kind: {} });
    await bridge.service.queue.enqueue({ kind: "renew", queueKey: "svc:queue-later", delayMs: 3_600_000 });
    expect((await bridge.admin("/admin/queue")).body).toEqual({ depth: 1, oldest_due_at: null, lag_seconds: 0, queued_by_kind: { renew: 1 } });
  });
});
