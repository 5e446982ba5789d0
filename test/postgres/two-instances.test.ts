import { afterEach, describe, expect, it } from "vitest";
import { bridgeEnv, createdEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { adminGet, freePort, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { freshDatabase } from "../helpers/postgres.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { readStoreOf } from "../helpers/test-store.js";
import { waitFor } from "../helpers/wait.js";

const ORDERS = 40;
const aYearAhead = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10);

/**
 * Two instances of the bridge on one PostgreSQL database, as behind a load balancer: the panel
 * sends each order to either, and one of them dies by SIGKILL with work in flight. Every promise
 * of one instance must hold for the pair.
 */
describe("two instances on one PostgreSQL database", () => {
  let sb: TestSandbox | undefined;
  const dirs = tempDirs("lb-two-");
  const children: ChildBridge[] = [];

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill()));
    await sb?.close();
    sb = undefined;
    dirs.removeAll();
  });

  it("orders sent to both, one killed mid-flight: every order active within 30 s of the kill, one charge each, one renewal per term", { timeout: 120_000 }, async () => {
    // Slow enough that registrations are in flight when the kill comes.
    sb = await startTestSandbox({ balance: 1_000_000, faults: { latencyMs: 150 } });
    const { url: databaseUrl } = await freshDatabase();
    const instance = async (logLevel = "silent") => {
      const dir = dirs.make();
      const env = bridgeEnv(sb!.running, dir, {
        DATABASE_URL: databaseUrl,
        PORT: String(await freePort()),
        LOG_LEVEL: logLevel,
        WORKER_CONCURRENCY: "4",
        RETRY_MAX_DELAY_SECONDS: "1",
        // Both instances sweep every second; each fresh monthly licence (paid a year ahead) is due once.
        RENEWAL_LEAD_DAYS: "40",
        RENEWAL_CRON: "* * * * * *",
      });
      const child = await spawnBridge(env);
      children.push(child);
      return { child, env };
    };
    const a = await instance();
    const b = await instance();

    const orders = Array.from({ length: ORDERS }, (_, i) => ({
      id: `two-msg-${i}`,
      event: createdEvent({ id: `two-${i}`, ip: `198.18.1.${i}`, email: `c${i}@example.com`, next_due_date: aYearAhead }),
    }));
    // Each order goes to one instance; the first ten are also delivered again, at once, to the other
    // (a panel retrying through the load balancer): one acceptance per webhook-id.
    const answers = await Promise.all(
      orders.flatMap((o, i) => {
        const first = i % 2 ? a : b;
        const other = i % 2 ? b : a;
        const sends = [sendTo(first.child.url, o.event, o.id)];
        if (i < 10) sends.push(sendTo(other.child.url, o.event, o.id));
        return sends;
      }),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(ORDERS);
    expect(answers.filter((r) => r.status === 200 && r.body.status === "duplicate")).toHaveLength(10);

    // A dies while registrations are still being bought.
    await waitFor(() => sb!.sandbox.ledger().filter((c) => c.op === "register").length >= 8, 20_000, "the first registrations");
    expect(sb.sandbox.ledger().filter((c) => c.op === "register").length, "the kill comes mid-flight").toBeLessThan(ORDERS);
    const pidOfA = a.child.proc.pid!;
    await a.child.kill();
    const leasedByA = await readStoreOf(b.env, async (store) =>
      (await store.jobs.list({ state: "running" })).filter((j) => j.leasedBy?.split(":")[1] === String(pidOfA)),
    );
    expect(leasedByA.length, "A died holding leased jobs, which only B can finish").toBeGreaterThan(0);

    // B finishes everything, A's leased jobs included, once their leases run out.
    await waitFor(
      async () => {
        const { body } = await adminGet(b.child.url, "/admin/licenses?status=active");
        return (body.licenses as unknown[] | undefined)?.length === ORDERS;
      },
      30_000,
      "every order active on the surviving instance",
    );
    await waitFor(() => new Set(sb!.sandbox.ledger().filter((c) => c.op === "renew").map((c) => c.ip)).size === ORDERS, 30_000, "one renewal per licence");
    const unfinished = async () => {
      const c = await readStoreOf(b.env, (store) => store.jobs.counts());
      return c.queued + c.running;
    };
    await waitFor(async () => (await unfinished()) === 0, 20_000, "the queue to drain");
    // A few more sweeps on the survivor (and a restarted A) buy no second renewal of the same term:
    // the restarted A logs each of its ticks at debug level; after three, whatever a tick queued has run once the queue drains.
    const again = await instance("debug");
    const sweeps = () => again.child.output().split("\n").filter((l) => l.includes('"msg":"renewal sweep')).length;
    await waitFor(() => sweeps() >= 3, 20_000, "three sweeps on the restarted instance");
    await waitFor(async () => (await unfinished()) === 0, 20_000, "the queue to drain again");

    const registers = sb.sandbox.ledger().filter((c) => c.op === "register");
    expect(registers, "one charge per order").toHaveLength(ORDERS);
    expect(new Set(registers.map((c) => c.ip)).size).toBe(ORDERS);
    const renewals = sb.sandbox.ledger().filter((c) => c.op === "renew");
    expect(renewals, "one renewal charge per licence and term, whichever instance swept").toHaveLength(ORDERS);
    expect(new Set(renewals.map((c) => c.ip)).size).toBe(ORDERS);

    const counts = await readStoreOf(again.env, (store) => store.jobs.counts());
    expect({ ...counts, succeeded: 0 }, "nothing left queued, running, failed, blocked or cancelled").toEqual({ queued: 0, running: 0, succeeded: 0, failed: 0, blocked: 0, cancelled: 0 });
    const services = await readStoreOf(again.env, (store) => store.services.list("active"));
    expect(services).toHaveLength(ORDERS);
  });
});
